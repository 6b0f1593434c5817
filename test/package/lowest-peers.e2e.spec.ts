import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOWEST_DEPENDENCIES, LOWEST_PEERS, packedHosts } from './packed-app.js';
import { itCompletesAVerification } from './verification-flows.js';

/**
 * The packed package in a fresh app whose peers are the lowest versions the ranges allow (class-validator
 * 0.13.2, reflect-metadata 0.1.12, rxjs 7.1.0, NestJS 12.0), and the floors of its own caret dependencies:
 * installs without `--legacy-peer-deps`, and both hosts verify a number.
 */
describe('the packed package in a fresh NestJS app with the lowest allowed peers', () => {
  const suite = packedHosts(LOWEST_PEERS, LOWEST_DEPENDENCIES);

  it('installs exactly the lowest versions', () => {
    const installed = (name: string) =>
      (
        JSON.parse(readFileSync(join(suite.app.dir, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    for (const [name, version] of Object.entries({ ...LOWEST_PEERS, ...LOWEST_DEPENDENCIES }))
      expect(`${name}@${installed(name)}`).toBe(`${name}@${version}`);
  });

  describe('ES-module host', () => {
    itCompletesAVerification(() => ({ sb: suite.sb, host: suite.esm }), '+79123400201');
  });

  describe('CommonJS host', () => {
    itCompletesAVerification(() => ({ sb: suite.sb, host: suite.cjs }), '+79123400301');
  });
});
