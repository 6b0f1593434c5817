/**
 * A host listening on a Unix socket (behind nginx, say) without trusting its proxy sees no client
 * address: the per-address limits cannot apply to such requests. The module says so once in the host's
 * log, naming what to set, instead of leaving the limits silently off; with `limits.key`, or over TCP,
 * it says nothing. The requests themselves are served as before.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CapturingLogger } from '../support/log-capture.js';
import { PLATFORMS, type Platform } from '../support/verification-app.js';
import { freshIp, freshPhone, protectedHost, protectionFixture, startFrom } from './protection-host.js';
import type { LimitsOptions } from '../../src/options/limits.options.js';
import { VerificationService } from '../../src/verification/verification.service.js';

const NO_ADDRESS = /no client address.*trust proxy.*trustProxy.*limits\.key/;
let socketSerial = 0;

/** POST /verification/start over the Unix socket `path`: status and body. */
function startOverSocket(path: string, phone: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ phone_number: phone, method: 'sms' });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        socketPath: path,
        agent: false,
        method: 'POST',
        path: '/verification/start',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.each(PLATFORMS)('a host on a Unix socket, its proxy not trusted (%s)', (platform: Platform) => {
  const fx = protectionFixture();
  let socket: Server | undefined;
  afterEach(async () => {
    await new Promise((closed) => (socket ? socket.close(closed) : closed(undefined)));
    socket = undefined;
  });

  /** A host (its own logger) also served on a Unix socket: each connection handed to its HTTP server. */
  async function unixHost(limits: LimitsOptions) {
    const logger = new CapturingLogger();
    fx.host = await protectedHost(fx.sb, platform, limits, {}, { trustProxy: false, logger });
    const server = fx.host.app.getHttpServer() as { emit(event: 'connection', socket: unknown): void };
    const path = join(tmpdir(), `pv-${process.pid}-${++socketSerial}.sock`);
    socket = createServer((connection) => server.emit('connection', connection));
    await new Promise<void>((listening) => socket!.listen(path, listening));
    const warnings = () => logger.lines.filter((line) => NO_ADDRESS.test(line));
    return { path, logger, warnings };
  }

  it('serves the starts, and warns once in the log, without the number, while either per-address limit is on', async () => {
    for (const limits of [{}, { startPerIp: false }, { checkPerIp: false }] as const) {
      if (fx.host) await fx.host.close();
      if (socket) await new Promise((closed) => socket!.close(closed));
      const { path, logger, warnings } = await unixHost(limits);
      const phones = [freshPhone(), freshPhone()];
      for (const phone of phones) expect((await startOverSocket(path, phone)).status).toBe(201);
      expect({ limits, warnings: warnings().map((line) => line.slice(0, 5)) }).toEqual({
        limits,
        warnings: ['warn '],
      });
      const national = phones.map((phone) => phone.slice(2));
      expect(logger.lines.filter((line) => national.some((n) => line.includes(n)))).toEqual([]);
    }
  });

  it('says nothing over TCP, nor when the host keys its clients (limits.key), nor with both per-address limits off', async () => {
    for (const limits of [{}, { key: () => 'tenant-1' }, { startPerIp: false, checkPerIp: false }] as const) {
      if (fx.host) await fx.host.close();
      if (socket) await new Promise((closed) => socket!.close(closed));
      const { path, warnings } = await unixHost(limits);
      // Over TCP the address is the peer's (no proxy trusted): 127.0.0.1.
      expect((await startFrom(fx.host!, freshIp(), freshPhone())).status).toBe(201);
      if ('startPerIp' in limits || 'key' in limits)
        expect((await startOverSocket(path, freshPhone())).status).toBe(201);
      // Nor for the host's own call from its code (no request): it has no client to key.
      const own = await fx
        .host!.app.get(VerificationService)
        .start({ phoneNumber: freshPhone(), method: 'sms' });
      expect(own.status).toBe('sent');
      expect({ limits: Object.keys(limits), warnings: warnings() }).toEqual({
        limits: Object.keys(limits),
        warnings: [],
      });
    }
  });
});
