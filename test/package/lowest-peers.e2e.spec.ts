import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VerificationSandbox } from '../../src/testing/index.js';
import {
  installPackedPackage,
  LOWEST_DEPENDENCIES,
  LOWEST_PEERS,
  startHostApp,
  writeHosts,
  type HostApp,
  type PackedApp,
} from './packed-app.js';
import { itCompletesAVerification } from './verification-flows.js';

/**
 * The packed package in a fresh app whose peers are the lowest versions the ranges allow (class-validator
 * 0.13.2, reflect-metadata 0.1.12, rxjs 7.1.0, NestJS 12.0), and the floors of its own caret dependencies:
 * installs without `--legacy-peer-deps`, and both hosts verify a number.
 */
describe('the packed package in a fresh NestJS app with the lowest allowed peers', () => {
  let app: PackedApp;
  let sb: VerificationSandbox;
  let esm: HostApp;
  let cjs: HostApp;

  beforeAll(async () => {
    app = installPackedPackage(LOWEST_PEERS, LOWEST_DEPENDENCIES);
    writeHosts(app);
    sb = await VerificationSandbox.start({ port: 0 });
    const args = [sb.url, sb.demoAccount.apiKey, sb.demoAccount.apiSecret];
    [esm, cjs] = await Promise.all([
      startHostApp(app.dir, 'main.mjs', args),
      startHostApp(app.dir, 'dist/main.js', args),
    ]);
  }, 240_000);

  afterAll(async () => {
    esm?.stop();
    cjs?.stop();
    await sb?.close();
    app?.remove();
  });

  it('installs exactly the lowest versions', () => {
    const installed = (name: string) =>
      (
        JSON.parse(readFileSync(join(app.dir, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    for (const [name, version] of Object.entries({ ...LOWEST_PEERS, ...LOWEST_DEPENDENCIES }))
      expect(`${name}@${installed(name)}`).toBe(`${name}@${version}`);
  });

  describe('ES-module host', () => {
    itCompletesAVerification(() => ({ sb, host: esm }), '+79123400201');
  });

  describe('CommonJS host', () => {
    itCompletesAVerification(() => ({ sb, host: cjs }), '+79123400301');
  });
});
