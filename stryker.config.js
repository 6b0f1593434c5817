/**
 * Mutation testing of the library (`npm run test:mutation`; not part of `npm test`): every folder of `src/`
 * but the sandbox (`testing`), against the specs where its behaviour is tested, unit and in-process e2e
 * alike (jest.mutation.config.js). StrykerJS 9 (the last line that runs on Node 20) drives jest in ESM mode.
 * Each mutant runs the specs related to its file (findRelatedTests), and of those only the tests that
 * reached it in the first run (perTest).
 *
 * The whole library is hours of CPU on two cores: run the folders you touched, e.g.
 *   npm run test:mutation -- --mutate 'src/guard/**\/*.ts'
 * The run is incremental: `etc/mutation/stryker-incremental.json` (committed) keeps each mutant's result, so
 * a re-run tests only the mutants whose code or covering tests changed (`-- --force`: all). Scores per
 * folder, with their date and commit: CONTRIBUTING.md. The HTML and JSON reports go to reports/mutation/.
 */
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  jest: { configFile: 'jest.mutation.config.js', enableFindRelatedTests: true },
  testRunnerNodeArgs: ['--experimental-vm-modules'],
  coverageAnalysis: 'perTest',
  mutate: ['src/**/*.ts', '!src/testing/**', '!**/*.spec.ts', '!src/**/index.ts'],
  // The machine is shared: two runners, and room for a slow e2e test under load before a mutant counts as a time-out.
  concurrency: 2,
  // Jest in ESM mode keeps each run's modules: a fresh runner every 20 mutants bounds its memory (and its GC pauses).
  maxTestRunnerReuse: 20,
  timeoutMS: 30_000,
  // The first run (every related spec, in one runner, with coverage) is most of the suite when a folder that
  // every host imports is mutated: Stryker's default of 5 minutes stops it.
  dryRunTimeoutMinutes: 90,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  incremental: true,
  incrementalFile: 'etc/mutation/stryker-incremental.json',
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // Inside a folder that git, eslint and prettier already ignore, should a run be interrupted.
  tempDirName: 'test-output/stryker-tmp',
  ignorePatterns: ['dist', 'dist-*', 'sample-app/dist', 'reports', 'coverage', 'etc/mutation'],
};
