import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';
const JEST = resolve('node_modules/jest/bin/jest.js');
const ENVIRONMENT = resolve('test/mutation/first-failure.environment.cjs');

/** A spec file's body per scenario: what a mutant can break. */
const SPECS = {
  boot: `describe('a host', () => {
    beforeAll(() => { throw new Error('the module did not boot'); });
    it('answers', () => expect(1).toBe(1));
    it('answers again', () => expect(1).toBe(1));
  });`,
  each: `beforeEach(() => { throw new Error('no fixture'); });
    it('answers', () => expect(1).toBe(1));`,
  second: `it('holds', () => expect(1).toBe(1));
    it('breaks', () => expect(1).toBe(2));
    it('would have held', () => expect(1).toBe(1));`,
  clean: `it('holds', () => expect(1).toBe(1));
    it('holds again', () => expect(1).toBe(1));`,
} as const;

interface Outcome {
  numFailedTests: number;
  numPassedTests: number;
  numPendingTests: number;
}

/**
 * The mutation run's environment stops a mutant's run at its first failing test (the rest is skipped).
 * What it must never do is turn a failure into a skip: a mutant whose failure is skipped survives.
 */
describe('first-failure environment (mutation runs)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'first-failure-'));
    for (const [name, body] of Object.entries(SPECS)) writeFileSync(join(dir, `${name}.spec.cjs`), body);
    writeFileSync(
      join(dir, 'jest.config.cjs'),
      `module.exports = ${JSON.stringify({ rootDir: dir, testEnvironment: ENVIRONMENT, testMatch: ['**/*.spec.cjs'] })};`,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function run(spec: keyof typeof SPECS, mutant: string | undefined): Promise<Outcome> {
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
    if (mutant === undefined) delete env[ACTIVE_MUTANT];
    else env[ACTIVE_MUTANT] = mutant;
    const out = join(dir, `${spec}-${mutant ?? 'none'}.json`);
    await promisify(execFile)(
      process.execPath,
      [JEST, '--config', join(dir, 'jest.config.cjs'), '--json', '--outputFile', out, `${spec}.spec.cjs`],
      { env, cwd: dir },
    ).catch(() => undefined);
    const { numFailedTests, numPassedTests, numPendingTests } = JSON.parse(
      readFileSync(out, 'utf8'),
    ) as Outcome;
    return { numFailedTests, numPassedTests, numPendingTests };
  }

  it('a mutant that breaks a beforeAll (a host that no longer boots) fails every test of the block', async () => {
    await expect(run('boot', '7')).resolves.toEqual({
      numFailedTests: 2,
      numPassedTests: 0,
      numPendingTests: 0,
    });
  });

  it('a mutant that breaks a beforeEach fails the test; the rest of the file is skipped', async () => {
    await expect(run('each', '7')).resolves.toMatchObject({ numFailedTests: 1, numPassedTests: 0 });
  });

  it('with a mutant, the run stops at the first failing test; without one, every test runs', async () => {
    await expect(run('second', '7')).resolves.toEqual({
      numFailedTests: 1,
      numPassedTests: 1,
      numPendingTests: 1,
    });
    await expect(run('second', undefined)).resolves.toEqual({
      numFailedTests: 1,
      numPassedTests: 2,
      numPendingTests: 0,
    });
  });

  it('a mutant no test catches runs every test', async () => {
    await expect(run('clean', '7')).resolves.toEqual({
      numFailedTests: 0,
      numPassedTests: 2,
      numPendingTests: 0,
    });
  });
});
