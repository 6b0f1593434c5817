/** Jest in ESM mode: NestJS 12 ships as ES modules only. Run through `npm test`, which sets NODE_OPTIONS=--experimental-vm-modules. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    // The package's own name (as the sample app imports it) resolves to the sources in tests.
    '^nestjs-phone-verification$': '<rootDir>/src/index.ts',
    '^nestjs-phone-verification/testing$': '<rootDir>/src/testing/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // libphonenumber-js's ES build imports its metadata JSON without an import attribute, which
    // Jest's ESM loader warns about once per file; its CommonJS build (same code) loads quietly.
    '^libphonenumber-js/max$': '<rootDir>/node_modules/libphonenumber-js/max/index.cjs',
  },
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      { useESM: true, tsconfig: 'tsconfig.json', diagnostics: { ignoreCodes: [151002] } },
    ],
  },
  testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/src/**/*.spec.ts'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testSequencer: '<rootDir>/test/longest-first.sequencer.mjs',
  testTimeout: 30000,
  maxWorkers: 2,
  // Jest in ESM mode keeps the modules of every file a worker ran: a worker's heap grew by about 25 MB a spec
  // file, past 1.7 GB over 62 files, and a process that large took longer to exit than the 500 ms jest
  // grants it ("A worker process has failed to exit gracefully"; no handle was left open). A worker past
  // this much after a file is replaced by a fresh one, which also keeps the collector's pauses short.
  workerIdleMemoryLimit: '512MB',
};
