import { defineConfig } from 'vitest/config';

/**
 * Runs only the dashboard's tests (and those of apiserver/ui.ts, which serves it) without the
 * suite's global setup, which starts a Kafka broker these tests do not use:
 * `npx vitest run --config dashboard/vitest.config.ts`. `npm test` runs them too, with the rest.
 */
export default defineConfig({
  root: new URL('..', import.meta.url).pathname,
  test: {
    include: ['dashboard/src/**/*.test.ts', 'apiserver/ui.test.ts', 'test/e2e/dashboard*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
