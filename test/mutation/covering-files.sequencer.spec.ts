import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: the sequencer is plain ESM, loaded by jest from the mutation config.
import CoveringFilesSequencer from '../covering-files.sequencer.mjs';

interface FakeTest {
  path: string;
  context: {
    config: { rootDir: string; cacheDirectory: string; id: string; haste: object };
    hasteFS: { getSize(): number };
  };
}

const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';

/**
 * The mutation run's sequencer: the first run records which spec file holds which test; a mutant's run
 * keeps the files holding a test that reached it, and every file when nothing matches.
 */
describe('covering-files sequencer (mutation runs)', () => {
  let rootDir: string;
  let tests: FakeTest[];
  const sequencer = (testNamePattern?: string) =>
    new CoveringFilesSequencer({
      contexts: [{ config: { rootDir, cacheDirectory: rootDir, id: 'mutation' } }],
      globalConfig: { testNamePattern },
    });
  const fakeTest = (file: string): FakeTest => ({
    path: join(rootDir, file),
    context: {
      config: { rootDir, cacheDirectory: rootDir, id: 'mutation', haste: {} },
      hasteFS: { getSize: () => 0 },
    },
  });
  const result = (file: string, names: string[]) => ({
    testFilePath: join(rootDir, file),
    testResults: names.map((fullName) => ({ fullName })),
    perfStats: { start: 0, end: 1, runtime: 1 },
    numFailingTests: 0,
  });

  beforeEach(() => {
    rootDir = mkdtempSync(join(tmpdir(), 'pv-covering-'));
    tests = ['test/a.spec.ts', 'test/b.spec.ts', 'test/c.spec.ts'].map((file) => fakeTest(file));
    delete process.env[ACTIVE_MUTANT];
  });
  afterEach(() => {
    delete process.env[ACTIVE_MUTANT];
    rmSync(rootDir, { recursive: true, force: true });
  });

  const firstRun = () => {
    sequencer().cacheResults(tests, {
      testResults: [
        result('test/a.spec.ts', ['a one', 'a two (x)']),
        result('test/b.spec.ts', ['b one']),
        result('test/c.spec.ts', ['c one']),
      ],
    });
  };
  const kept = async (pattern?: string) =>
    ((await sequencer(pattern).sort(tests)) as FakeTest[])
      .map((t) => t.path.slice(rootDir.length + 1))
      .sort();

  it('the first run records each file’s tests by their full names', () => {
    firstRun();
    const map = JSON.parse(readFileSync(join(rootDir, 'test-output/covering-tests.json'), 'utf8'));
    expect(map).toEqual({
      'test/a.spec.ts': ['a one', 'a two (x)'],
      'test/b.spec.ts': ['b one'],
      'test/c.spec.ts': ['c one'],
    });
  });

  it('a mutant’s run keeps only the files holding a test its pattern names (escaped as Stryker does)', async () => {
    firstRun();
    process.env[ACTIVE_MUTANT] = '7';
    expect(await kept('(a two \\(x\\))')).toEqual(['test/a.spec.ts']);
    expect(await kept('(a one)|(c one)')).toEqual(['test/a.spec.ts', 'test/c.spec.ts']);
  });

  it('a file the first run did not see is kept', async () => {
    firstRun();
    tests.push(fakeTest('test/d.spec.ts'));
    process.env[ACTIVE_MUTANT] = '7';
    expect(await kept('(b one)')).toEqual(['test/b.spec.ts', 'test/d.spec.ts']);
  });

  it('every file runs without a pattern, without an active mutant, or when no file matches', async () => {
    firstRun();
    const all = ['test/a.spec.ts', 'test/b.spec.ts', 'test/c.spec.ts'];
    process.env[ACTIVE_MUTANT] = '7';
    expect(await kept(undefined)).toEqual(all);
    expect(await kept('(nobody)')).toEqual(all);
    delete process.env[ACTIVE_MUTANT];
    expect(await kept('(b one)')).toEqual(all);
  });

  it('a mutant’s run does not overwrite the first run’s record', async () => {
    firstRun();
    process.env[ACTIVE_MUTANT] = '7';
    // A mutant that runs on import has no pattern: its run records nothing either.
    sequencer(undefined).cacheResults(tests, { testResults: [result('test/b.spec.ts', [])] });
    sequencer('(b one)').cacheResults(tests, { testResults: [result('test/b.spec.ts', [])] });
    delete process.env[ACTIVE_MUTANT];
    const map = JSON.parse(readFileSync(join(rootDir, 'test-output/covering-tests.json'), 'utf8'));
    expect(map['test/b.spec.ts']).toEqual(['b one']);
  });
});
