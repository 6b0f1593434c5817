/** Jest in ESM mode: NestJS 12 ships as ES modules only. Run through `npm test`, which sets NODE_OPTIONS=--experimental-vm-modules. */
import { mergedParts } from './test/merged-parts.mjs';

// Each part of a merged spec file runs once: a part no merged file imports fails every run here.
const { parts } = mergedParts(import.meta.dirname);
/** Not run alone: the unit specs of src/ that a merged file imports run through it (a test/ part is no spec). */
const mergedUnitSpecs = parts
  .filter((path) => path.endsWith('.spec.ts'))
  // jest replaces <rootDir> only at a pattern's start.
  .map((path) => `!${import.meta.dirname}/${path}`);

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
  // SWC strips types file by file (tsconfig's isolatedModules keeps the sources fit for it) and emits Nest's
  // decorator metadata as tsc does. On a fresh machine (no transform cache, as in CI) it took a fifth of the
  // CPU off six folders' specs against ts-jest's transpile mode (72.5 s to 57.9 s user, --runInBand).
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          target: 'es2022',
          keepClassNames: true,
        },
        sourceMaps: 'inline',
      },
    ],
  },
  testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/src/**/*.spec.ts', ...mergedUnitSpecs],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testSequencer: '<rootDir>/test/longest-first.sequencer.mjs',
  testTimeout: 30000,
  // Four workers on two cores: a file's time is partly spent waiting (npm installs, Chromium's page timers, the
  // sandbox processes, the soak's traffic, the in-doubt starts' real time-outs), and the extra workers compute
  // meanwhile. `npm test` on an idle machine (0813ce71, 270 suites): 3 workers 516 s wall, 886 s CPU; 4 workers
  // 476 s, 845 s.
  maxWorkers: 4,
  // Jest in ESM mode keeps the modules of every file a worker ran: a worker's heap grows by about 25 MB a spec
  // file. A worker past this much after a file is replaced by a fresh one, which also keeps the collector's
  // pauses short.
  workerIdleMemoryLimit: '512MB',
  // No handle outlives a file (every file's timers, sockets, servers and child processes are gone 300 ms
  // after its teardown) and each worker's last one emits 'exit' 1 ms after jest's end message; but a process
  // of 430-480 MB then takes longer than jest's default 500 ms to be gone on 2 loaded cores (a plain Node
  // process of 600 MB: 190-490 ms from 'exit' to gone at load 13), and jest reported it as "a worker process
  // has failed to exit gracefully ... tests leaking". With CI's two other Node lines side by side (four workers
  // on two cores) one worker took longer than 3 s. A leak still shows: a worker not gone by then is killed and
  // the warning printed.
  workerGracefulExitTimeout: 10_000,
};
