/**
 * Jest for the mutation run (`npm run test:mutation`, stryker.config.js): the unit specs only, the
 * ones that start no server, so that each mutant runs in a fraction of a second and needs no Redis
 * (no global setup). The list is found, not written down: specs move between test/ and src/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import base from './jest.config.js';

const root = import.meta.dirname;

/**
 * Where the specs of the mutated code live: beside it in src/, or in test/'s folders for protection,
 * options and the pumping defence's properties. Other specs (sessions, API client, webhooks, ...)
 * also import core, but each of them would be loaded again for every mutant of core.
 */
const SUBJECT_IN_SCOPE = /^(src\/(core|protection|options)|test\/(protection|operations|hardening))\//;

/**
 * A spec that imports the Nest module, the sandbox, a test host or a Redis server, runs a child
 * process or listens on a port is not a unit spec.
 */
const STARTS_SOMETHING =
  /from '[^']*(\/module\/|\/testing\/|@nestjs\/(testing|core|platform-\w+)|\/support\/|redis\.store|node:child_process|node:http|playwright|supertest)[^']*'|\.listen\(/;

function specsUnder(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter(
      (entry) => entry.isFile() && entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.e2e.spec.ts'),
    )
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

export const unitSpecs = [...specsUnder('src'), ...specsUnder('test')]
  .filter((path) => SUBJECT_IN_SCOPE.test(path))
  .filter((path) => !STARTS_SOMETHING.test(readFileSync(join(root, path), 'utf8')))
  .sort();

// No Redis to start, and no ordering of the long suites to do: those are the full suite's.
const { globalSetup: _setup, globalTeardown: _teardown, testSequencer: _sequencer, ...unitBase } = base;

export default {
  ...unitBase,
  moduleNameMapper: {
    ...unitBase.moduleNameMapper,
    // Stryker's sandbox has no node_modules folder of its own: resolve from here, as Node would.
    '^libphonenumber-js/max$': createRequire(import.meta.url).resolve('libphonenumber-js/max'),
  },
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: unitSpecs.map((path) => `<rootDir>/${path}`),
};
