import { defineConfig } from 'vitest/config';

/**
 * The tests StrykerJS runs against each mutant (`npm run test:mutation`, stryker.config.mjs):
 * the ones that judge the fold and the patch code in memory. The fold's verdicts also run
 * against both real logs in the main suite; here only `the fold alone` and the property
 * tests do, so a mutant costs milliseconds, not a broker round trip (no global setup, no
 * Kafka: this is not the suite, and nothing of the suite is skipped by it).
 */
export default defineConfig({
  test: {
    include: ['projections/fold.test.ts', 'projections/fold-verdicts.test.ts', 'projections/fold-properties.test.ts', 'apiserver/patch/*.test.ts'],
    testNamePattern: /^(?!(a projection|concurrent writers) on the )/,
    pool: 'forks',
    testTimeout: 60_000,
  },
});
