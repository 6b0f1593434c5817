/**
 * Mutation testing of the pure rules and protection (`npm run test:mutation`; not part of `npm test`).
 * StrykerJS 9 (the last line that runs on Node 20) drives jest in ESM mode through its jest runner,
 * with the unit specs only (jest.mutation.config.js): each mutant runs just the tests that cover it.
 * The HTML report goes to reports/mutation/.
 */
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  // findRelatedTests: a mutant runs only the spec files that import its file (directly or not).
  jest: { configFile: 'jest.mutation.config.js', enableFindRelatedTests: true },
  testRunnerNodeArgs: ['--experimental-vm-modules'],
  coverageAnalysis: 'perTest',
  mutate: ['src/core/**/*.ts', 'src/protection/**/*.ts', 'src/options/**/*.ts', '!**/*.spec.ts'],
  // The machine is shared: two runners, and room for a slow test under load before a mutant counts as a time-out.
  concurrency: 2,
  timeoutMS: 10_000,
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // Inside a folder that git, eslint and prettier already ignore, should a run be interrupted.
  tempDirName: 'test-output/stryker-tmp',
  ignorePatterns: ['dist', 'dist-*', 'sample-app/dist', 'reports', 'coverage'],
};
