/**
 * Mutation testing of the pure rules and protection (`npm run test:mutation`; not part of `npm test`).
 * StrykerJS 9 (the last line that runs on Node 20) drives jest in ESM mode through its jest runner,
 * with the unit specs only (jest.mutation.config.js). Each mutant runs the specs that import its file
 * (findRelatedTests), and of those only the tests that reached it in the first run (perTest).
 *
 * Options are left out by default: their table of rules alone holds more mutants than core and
 * protection together, most of them values read once at import, each of which reloads every spec
 * that imports options. Run them when changing options:
 *   npm run test:mutation -- --mutate 'src/options/**\/*.ts'
 * The HTML and JSON reports go to reports/mutation/.
 */
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  jest: { configFile: 'jest.mutation.config.js', enableFindRelatedTests: true },
  testRunnerNodeArgs: ['--experimental-vm-modules'],
  coverageAnalysis: 'perTest',
  mutate: ['src/core/**/*.ts', 'src/protection/**/*.ts', '!**/*.spec.ts'],
  // The machine is shared: two runners, and room for a slow test under load before a mutant counts as a time-out.
  concurrency: 2,
  // Jest in ESM mode keeps each run's modules: a fresh runner every 20 mutants bounds its memory (and its GC pauses).
  maxTestRunnerReuse: 20,
  timeoutMS: 10_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // A later run tests again only the mutants whose code or covering tests changed (`-- --force`: all).
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // Inside a folder that git, eslint and prettier already ignore, should a run be interrupted.
  tempDirName: 'test-output/stryker-tmp',
  ignorePatterns: ['dist', 'dist-*', 'sample-app/dist', 'reports', 'coverage'],
};
