import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** A CommonJS host's TypeScript settings, as Nest's starter has them (module and resolution `nodenext`). */
const HOST_TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'ES2023',
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    skipLibCheck: true,
    types: ['node'],
    rootDir: 'src',
    outDir: 'dist',
  },
  include: ['src'],
};

/** Runs a CommonJS script in the app folder and returns what it printed. */
function runCommonJs(dir: string, source: string): string {
  writeFileSync(join(dir, 'probe.cjs'), source);
  return execFileSync(process.execPath, [join(dir, 'probe.cjs')], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
}

/**
 * The packed package in a CommonJS NestJS app: TypeScript compiled by tsc to `require()` calls (Node 20.19+
 * loads the package's ES modules through require(esm)), on Express, against the sandbox.
 */
describe('the built package in a fresh CommonJS NestJS app', () => {
  let app: PackedApp;
  let sb: VerificationSandbox;
  let host: HostApp;
  let compiled: string;

  beforeAll(async () => {
    app = installPackedPackage();
    writeFileSync(join(app.dir, 'package.json'), JSON.stringify({ name: 'cjs-host', type: 'commonjs' }));
    writeFileSync(join(app.dir, 'tsconfig.json'), JSON.stringify(HOST_TSCONFIG));
    mkdirSync(join(app.dir, 'src'));
    copyFileSync(join(root, 'test/package/cjs-host.fixture.cts'), join(app.dir, 'src', 'main.ts'));
    // The host's own type check: the package's types must resolve for a CommonJS file, or tsc fails here.
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', app.dir], {
      cwd: app.dir,
      encoding: 'utf8',
    });
    compiled = readFileSync(join(app.dir, 'dist', 'main.js'), 'utf8');
    sb = await VerificationSandbox.start({ port: 0 });
    host = await startHostApp(app.dir, 'dist/main.js', [
      sb.url,
      sb.demoAccount.apiKey,
      sb.demoAccount.apiSecret,
    ]);
  }, 120_000);

  afterAll(async () => {
    host?.stop();
    await sb?.close();
    app?.remove();
  });

  it('is compiled to CommonJS: both entries are loaded with require()', () => {
    expect(compiled).toContain('require("nestjs-phone-verification")');
    expect(compiled).toContain('require("nestjs-phone-verification/testing")');
    expect(host.ready.sandbox).toBe('function');
  });

  it('require() gives both entries to plain CommonJS, with their exports', () => {
    const printed = runCommonJs(
      app.dir,
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
    // The sandbox CLI is the one exception: it runs as its own program, never under require().
    const modules = filesUnder(join(app.packageDir, 'dist')).filter(
      (file) => file.endsWith('.js') && file !== 'testing/cli.js',
    );
    expect(modules.length).toBeGreaterThan(50);
    const printed = runCommonJs(
      app.dir,
      `const { join } = require('node:path');
       const failed = [];
       for (const file of ${JSON.stringify(modules)}) {
         try { require(join(${JSON.stringify(join(app.packageDir, 'dist'))}, file)); }
         catch (err) { failed.push(file + ': ' + (err.code ?? err.message)); }
       }
       console.log(JSON.stringify(failed));`,
    );
    expect(JSON.parse(printed)).toEqual([]);
  });

  itCompletesVerifications(() => ({ sb, host }), '+7912340010');
});
