/**
 * Jest for the mutation run (`npm run test:mutation`, stryker.config.js). Every spec whose behaviour a mutant
 * of `src/` can change, unit specs and the in-process e2e suites alike (a host over real HTTP against the
 * sandbox, Redis at `REDIS_URL` or a throwaway one from the global setup). Left out, because a mutant of
 * `src/` cannot reach them or they only repeat what others cover at many times the cost:
 * - the pages driven in Chromium (the element's and client's logic has specs that run without a browser);
 * - the package suites, which install the built `dist/` (a mutant lives in `src/`);
 * - the docs checks (they read files, not behaviour) and the soak (a minute of traffic).
 * Stryker runs, for each mutant, only the tests that reached it in the first run (coverageAnalysis: perTest)
 * among the specs related to the mutated file (findRelatedTests).
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import base from './jest.config.js';

const root = import.meta.dirname;

const OUT_OF_REACH =
  /^test\/(package|docs)\/|^test\/hardening\/soak\.spec\.ts$|^test\/(client\/browser-client|element\/phone-verification)\.e2e\.spec\.ts$|^test\/sample-app\/(verify-by-each-method|waits-and-failures)\.spec\.ts$/;

function specsUnder(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.spec.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

export const mutationSpecs = [...specsUnder('src'), ...specsUnder('test')]
  .filter((path) => !OUT_OF_REACH.test(path))
  .sort();

// Jest's own order is enough: the long-first sequencer exists for the full suite's two workers.
const { testSequencer: _sequencer, ...mutationBase } = base;

export default {
  ...mutationBase,
  moduleNameMapper: {
    ...mutationBase.moduleNameMapper,
    // Stryker's sandbox has no node_modules folder of its own: resolve from here, as Node would.
    '^libphonenumber-js/max$': createRequire(import.meta.url).resolve('libphonenumber-js/max'),
  },
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: mutationSpecs.map((path) => `<rootDir>/${path}`),
};
