import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { VerificationSandbox } from '../../src/testing/index.js';
import {
  filesUnder,
  installPackedPackage,
  root,
  startHostApp,
  type HostApp,
  type PackedApp,
} from './packed-app.js';
import { itCompletesVerifications } from './verification-flows.js';

/** The packed package in a fresh ES-module NestJS app (plain JavaScript), and what the tarball holds. */
describe('the built package in a fresh ESM NestJS app', () => {
  let app: PackedApp;
  let sb: VerificationSandbox;
  let host: HostApp;

  beforeAll(async () => {
    app = installPackedPackage();
    copyFileSync(join(root, 'test/package/host-app.fixture.mjs'), join(app.dir, 'main.mjs'));
    sb = await VerificationSandbox.start({ port: 0 });
    host = await startHostApp(app.dir, 'main.mjs', [sb.url, sb.demoAccount.apiKey, sb.demoAccount.apiSecret]);
  }, 120_000);

  afterAll(async () => {
    host?.stop();
    await sb?.close();
    app?.remove();
  });

  it('imports both entries', () => {
    expect(host.ready.sandbox).toBe('function');
  });

  it('ships dist, the sources its maps point at, README and docs; no tests', () => {
    const files = filesUnder(app.packageDir);
    const top = new Set(files.map((file) => file.split('/')[0]));
    expect([...top].sort()).toEqual(['README.md', 'dist', 'docs', 'package.json', 'src']);
    expect(files).toContain('src/index.ts');
    expect(files.filter((file) => file.endsWith('.spec.ts'))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.tsbuildinfo'))).toEqual([]);
  });

  it('every source map and declaration map resolves to source text inside the package', () => {
    const maps = filesUnder(app.packageDir).filter((file) => file.endsWith('.map'));
    expect(maps).toEqual(expect.arrayContaining(['dist/index.js.map', 'dist/index.d.ts.map']));
    const unresolved: string[] = [];
    for (const map of maps) {
      const path = join(app.packageDir, map);
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as {
        sources: string[];
        sourceRoot?: string;
        sourcesContent?: (string | null)[];
      };
      expect(parsed.sources.length).toBeGreaterThan(0);
      parsed.sources.forEach((source, i) => {
        const target = resolve(dirname(path), parsed.sourceRoot ?? '', source);
        const inside = target.startsWith(app.packageDir + '/');
        if (typeof parsed.sourcesContent?.[i] !== 'string' && !(inside && existsSync(target)))
          unresolved.push(`${map} -> ${source}`);
      });
    }
    expect(unresolved).toEqual([]);
  });

  itCompletesVerifications(() => ({ sb, host }), '+7912340000');
});
