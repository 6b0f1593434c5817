/**
 * Mutation testing of the library (`npm run test:mutation`; not part of `npm test`): every folder of `src/`
 * but the sandbox (`testing`), one folder a run, against the specs where that folder's behaviour is tested
 * (jest.mutation.config.js, SPECS_BY_FOLDER: its unit specs and the in-process e2e suites of its feature):
 *   MUTATE_FOLDER=history npm run test:mutation
 * Each mutant runs only the spec files holding a test that reached it in the first run (coverageAnalysis
 * perTest, test/covering-files.sequencer.mjs); a mutant that runs on import (static) runs the folder's specs. Without MUTATE_FOLDER every spec in reach runs against
 * whatever `--mutate` names: hours of CPU on two cores for a folder that every host imports.
 *
 * A few files tested outside their folder's suites: `MUTATE_SPECS=<name>` (SPECS_BY_SCOPE) narrows the specs.
 *
 * The run is incremental, one file per folder (a run's report holds only the files it mutated, so two
 * folders cannot share one): `etc/mutation/<folder>.json` (committed) keeps each mutant's result, and a
 * re-run tests only the mutants whose code or covering tests changed (`-- --force`: all). Scores per folder,
 * with their date and commit: CONTRIBUTING.md. The HTML and JSON reports go to reports/mutation/<folder>/.
 */
const folder = process.env.MUTATE_FOLDER;
const reports = folder === undefined ? 'reports/mutation' : `reports/mutation/${folder}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  // Not findRelatedTests: jest would resolve the imports of every spec in reach on each run to find the related
  // ones, when the covering-files sequencer already keeps only the files holding a test that reached the mutant.
  jest: { configFile: 'jest.mutation.config.js', enableFindRelatedTests: false },
  testRunnerNodeArgs: ['--experimental-vm-modules'],
  coverageAnalysis: 'perTest',
  mutate: [
    folder === undefined ? 'src/**/*.ts' : `src/${folder}/**/*.ts`,
    '!src/testing/**',
    '!**/*.spec.ts',
    '!src/**/index.ts',
  ],
  // The machine is shared: one runner (PV_MUTATION_CONCURRENCY to change), and room for a slow e2e test
  // under load before a mutant counts as a time-out.
  concurrency: Number(process.env.PV_MUTATION_CONCURRENCY ?? 1),
  // Jest in ESM mode keeps each run's modules (a runner reached 1.8 GB after its first run and four mutants of
  // e2e specs): a fresh runner every 10 mutants bounds its memory and its collector's pauses.
  maxTestRunnerReuse: 10,
  timeoutMS: 30_000,
  // The first run (every related spec, in one runner, with coverage) is most of the suite when a folder that
  // every host imports is mutated: Stryker's default of 5 minutes stops it.
  dryRunTimeoutMinutes: 90,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `${reports}/index.html` },
  jsonReporter: { fileName: `${reports}/mutation.json` },
  incremental: true,
  incrementalFile: `etc/mutation/${folder ?? 'stryker-incremental'}.json`,
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // Inside a folder that git, eslint and prettier already ignore, should a run be interrupted.
  tempDirName: 'test-output/stryker-tmp',
  ignorePatterns: ['dist', 'dist-*', 'sample-app/dist', 'reports', 'coverage', 'etc/mutation'],
};
