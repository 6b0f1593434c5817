import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { filesUnder, LATEST_PEERS, packedHosts, root, runCommonJs } from './packed-app.js';
import { itChangesAPhone, itCompletesVerifications } from './verification-flows.js';

interface Manifest {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}

/** The package names a compiled module imports: static `import`/`export … from`, bare `import '…'` and `import()`. */
function importedPackages(source: string): string[] {
  const specifiers = [
    ...source.matchAll(/^\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/gm),
    ...source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
    ...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((match) => match[1]);
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]));
}

/**
 * The packed package installed into a fresh app with only its required peers, at the newest versions their
 * ranges allow, from the registry: what the tarball holds, and an ES-module host and a CommonJS host that
 * each complete verifications against the sandbox.
 */
describe('the packed package in a fresh NestJS app with the latest required peers', () => {
  const suite = packedHosts(LATEST_PEERS);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;

  it('installs without a peer conflict and with no optional peer pulled in', () => {
    expect(suite.app.installLog).not.toMatch(/ERESOLVE|peer dep/i);
    for (const optional of ['axios', '@nestjs/axios', 'ioredis', 'redis', 'prom-client', '@nestjs/terminus'])
      expect(existsSync(join(suite.app.dir, 'node_modules', optional))).toBe(false);
  });

  it('boots an ES-module host and a CommonJS host (require()) on both entries', () => {
    expect(readFileSync(join(suite.app.dir, 'dist', 'main.js'), 'utf8')).toContain(
      'require("nestjs-phone-verification")',
    );
    expect(suite.esm.ready.sandbox).toBe('function');
    expect(suite.cjs.ready.sandbox).toBe('function');
  });

  it('ships dist, the sources its maps point at, README, CHANGELOG, LICENSE and docs; no tests', () => {
    const files = filesUnder(suite.app.packageDir);
    const top = new Set(files.map((file) => file.split('/')[0]));
    expect([...top].sort()).toEqual([
      'CHANGELOG.md',
      'LICENSE',
      'README.md',
      'dist',
      'docs',
      'package.json',
      'src',
    ]);
    expect(files).toContain('src/index.ts');
    expect(files.filter((file) => file.endsWith('.spec.ts'))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.tsbuildinfo'))).toEqual([]);
  });

  it('declares as peers exactly the packages its modules import (besides its dependencies)', () => {
    const imported = new Set(
      filesUnder(join(suite.app.packageDir, 'dist'))
        .filter((file) => file.endsWith('.js'))
        .flatMap((file) => importedPackages(readFileSync(join(suite.app.packageDir, 'dist', file), 'utf8'))),
    );
    for (const dependency of Object.keys(manifest.dependencies)) imported.delete(dependency);
    // Nest's ValidationPipe (the client routes' pipe extends it) loads class-transformer itself.
    imported.add('class-transformer');
    expect([...imported].sort()).toEqual(Object.keys(manifest.peerDependencies).sort());
    const required = Object.keys(manifest.peerDependencies).filter(
      (peer) => !manifest.peerDependenciesMeta[peer]?.optional,
    );
    expect(required.sort()).toEqual([
      '@nestjs/common',
      '@nestjs/core',
      '@nestjs/event-emitter',
      'class-transformer',
      'class-validator',
    ]);
  });

  it("README's links work on the registry's page: absolute, an anchor, or a file in the tarball", () => {
    const readme = readFileSync(join(suite.app.packageDir, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]);
    expect(links.length).toBeGreaterThan(5);
    const broken = links.filter(
      (link) =>
        !/^https?:\/\//.test(link) &&
        !link.startsWith('#') &&
        !existsSync(join(suite.app.packageDir, link.split('#')[0])),
    );
    expect(broken).toEqual([]);
  });

  it('every source map and declaration map resolves to source text inside the package', () => {
    const maps = filesUnder(suite.app.packageDir).filter((file) => file.endsWith('.map'));
    expect(maps).toEqual(expect.arrayContaining(['dist/index.js.map', 'dist/index.d.ts.map']));
    const unresolved: string[] = [];
    for (const map of maps) {
      const path = join(suite.app.packageDir, map);
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as {
        sources: string[];
        sourceRoot?: string;
        sourcesContent?: (string | null)[];
      };
      expect(parsed.sources.length).toBeGreaterThan(0);
      parsed.sources.forEach((source, i) => {
        const target = resolve(dirname(path), parsed.sourceRoot ?? '', source);
        const inside = target.startsWith(suite.app.packageDir + '/');
        if (typeof parsed.sourcesContent?.[i] !== 'string' && !(inside && existsSync(target)))
          unresolved.push(`${map} -> ${source}`);
      });
    }
    expect(unresolved).toEqual([]);
  });

  it('require() gives both entries to plain CommonJS, with their exports', () => {
    const printed = runCommonJs(
      suite.app.dir,
      `const main = require('nestjs-phone-verification');
       const testing = require('nestjs-phone-verification/testing');
       console.log(JSON.stringify({
         module: typeof main.VerificationModule.forRoot,
         service: typeof main.VerificationService,
         sandbox: typeof testing.VerificationSandbox.start,
       }));`,
    );
    expect(JSON.parse(printed)).toEqual({ module: 'function', service: 'function', sandbox: 'function' });
  });

  it('no module of the package uses top-level await (require(esm) refuses one, ERR_REQUIRE_ASYNC_MODULE)', () => {
    // Every module, not only those the entries load today: a top-level await added anywhere fails here.
    // The sandbox CLI is the one exception: it runs as its own program, never under require(). The React
    // hook's module needs react, an optional peer this app does not have.
    const modules = filesUnder(join(suite.app.packageDir, 'dist')).filter(
      (file) => file.endsWith('.js') && file !== 'testing/cli.js' && file !== 'client/react/index.js',
    );
    expect(modules.length).toBeGreaterThan(50);
    const printed = runCommonJs(
      suite.app.dir,
      `const { join } = require('node:path');
       const failed = [];
       for (const file of ${JSON.stringify(modules)}) {
         try { require(join(${JSON.stringify(join(suite.app.packageDir, 'dist'))}, file)); }
         catch (err) { failed.push(file + ': ' + (err.code ?? err.message)); }
       }
       console.log(JSON.stringify(failed));`,
    );
    expect(JSON.parse(printed)).toEqual([]);
  });

  describe('ES-module host', () => {
    itCompletesVerifications(() => ({ sb: suite.sb, host: suite.esm }), '+7912340000');
    itChangesAPhone(() => ({ sb: suite.sb, host: suite.esm }), '+7912340000');
  });

  describe('CommonJS host', () => {
    itCompletesVerifications(() => ({ sb: suite.sb, host: suite.cjs }), '+7912340010');
    itChangesAPhone(() => ({ sb: suite.sb, host: suite.cjs }), '+7912340010');
  });
});
