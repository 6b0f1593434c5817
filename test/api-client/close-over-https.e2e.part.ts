/**
 * An API over HTTPS: `close()` closes the client's connections there too (each transport keeps a pool per
 * scheme: the axios transport an agent for each), so a call after it opens a new one, and the process ends
 * by itself. The client runs in a process of its own (support/https-client.fixture.mjs, the built package)
 * that trusts the server's test-only certificate for 127.0.0.1 (test/support/tls/) through
 * NODE_EXTRA_CA_CERTS, as a host's CA list is set.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type net from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

const CERT = fileURLToPath(new URL('../support/tls/cert.pem', import.meta.url));
const KEY = fileURLToPath(new URL('../support/tls/key.pem', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./support/https-client.fixture.mjs', import.meta.url));

describe('close() of an API client over HTTPS', () => {
  let server: https.Server;
  let connections = 0;
  let baseUrl = '';

  beforeAll(async () => {
    server = https.createServer({ cert: readFileSync(CERT), key: readFileSync(KEY) }, (_req, res) => {
      const text = JSON.stringify({ balance: { amount: connections, currency: 'RUB' } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    server.on('secureConnection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `https://127.0.0.1:${(server.address() as net.AddressInfo).port}/api/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each(['undici', 'axios'])(
    'the %s transport: two calls share one connection, the call after close() opens a new one, and the process ends',
    async (transport) => {
      const run = await promisify(execFile)(process.execPath, [FIXTURE, baseUrl, transport], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: CERT },
        timeout: 20_000,
      });
      // Each balance is the count of connections the server had taken when it answered.
      const [first, beforeClose, afterClose] = JSON.parse(run.stdout) as number[];
      expect(beforeClose).toBe(first);
      expect(afterClose).toBe(first! + 1);
    },
  );
});
