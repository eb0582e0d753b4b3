import { defineConfig } from 'vitest/config';

/**
 * Branch-coverage floors (percent) of the four packages the fold, the apiserver, the
 * reconcilers and the logs live in, enforced by `npm run test:coverage` (and so by CI).
 * Started from the figures of the whole suite at 26fa48f (projections 87.53, apiserver 73.95,
 * reconcilers 81.93, log 66.40), rounded down; raised from the clean-clone CI run of 7c4d6c3
 * (projections 89.29, apiserver 79.22, reconcilers 84.23, log 67.73), a point under each.
 * A floor only goes up: raise it when coverage rises, never lower it to let a change in.
 */
const BRANCH_FLOORS = {
  'projections/**': 88,
  'apiserver/**': 78,
  'reconcilers/**': 83,
  'log/**': 66,
} as const;

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    // Only what is not a test of ours. No test file is excluded: nothing is skipped by design
    // (Kafka is a real broker everywhere; the Testcontainers Kafka of test/global-setup.ts is
    // an opt-in of the global setup, LOGPLANE_KAFKA=testcontainers, not a test).
    exclude: ['node_modules/**', '.kafka-local/**', '.logplane/**', 'coverage/**'],
    globalSetup: ['./test/global-setup.ts'],
    setupFiles: ['./test/kafka-meter.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One worker process runs file after file with its modules loaded once (vitest's default,
    // `isolate: true`, forks a fresh process per file and re-imports the whole graph: about
    // 2 s of the machine's 2 cores per file, ~600 s of a 291-file run). No test depends on a
    // fresh module state: none mocks a module (the apiserver's randomness is an option, see
    // apiserver/generate-name.test.ts), and tests that set environment variables restore them.
    isolate: false,
    coverage: {
      provider: 'v8',
      include: Object.keys(BRANCH_FLOORS).map((folder) => `${folder}/*.ts`),
      // Tests and their helpers are not the code under test; generated code is not written by hand.
      exclude: ['**/*.test.ts', '**/testing.ts', '**/test-fixtures.ts', '**/fixtures/**', 'log/contract.ts', '**/generated.ts', '**/*.generated.ts'],
      reporter: ['text-summary', 'json-summary'],
      // The figures are printed even when a test fails (the run fails anyway).
      reportOnFailure: true,
      reportsDirectory: './coverage',
      thresholds: Object.fromEntries(Object.entries(BRANCH_FLOORS).map(([folder, branches]) => [`${folder}/*.ts`, { branches }])),
    },
  },
});
