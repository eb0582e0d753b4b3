// StrykerJS: mutation testing of the fold and the patch code (issue 24). `npm run test:mutation`.
// The score must stay at or above `thresholds.break` (a floor that only goes up, as the
// coverage floors in vitest.config.ts): a test that does not notice a broken branch shows up.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: ['projections/fold.ts', 'projections/node-admission.ts', 'apiserver/patch/json-patch.ts', 'apiserver/patch/merge.ts', 'apiserver/patch/strategic.ts', 'apiserver/patch/patch-meta.ts'],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 20_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // 73.27 % at e75c7b3 (fold.ts 73.90, node-admission.ts 75.96, json-patch.ts 71.89, strategic.ts 72.40,
  // patch-meta.ts 65.79, merge.ts 100; 1,635 mutants, 18 min on this loaded machine): the floor is 73.
  thresholds: { high: 90, low: 75, break: 73 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
