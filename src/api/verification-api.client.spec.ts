import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationApiClient } from './verification-api.client.js';

/**
 * The sandbox never sends a method or status this package does not know, so this one case uses a tiny
 * local server that answers like a future version of the API would.
 */
describe('unknown methods and statuses from the wire', () => {
  let server: http.Server;
  let client: VerificationApiClient;
  let connections = 0;
  const RID = '0b7d1c2e-5f3a-4e9b-8c6d-1a2b3c4d5e6f';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url === '/v1/verify') {
        res.statusCode = 201;
        res.end(
          JSON.stringify({
            request_id: RID,
            phone_number: '+79123456789',
            method: 'carrier_pigeon',
            status: 'in_flight',
            cost: { amount: 1.5, currency: 'RUB' },
            expires_at: '2026-10-01T12:05:00Z',
            code_length: 6,
            feather_colour: 'grey',
          }),
        );
      } else if (req.method === 'GET' && req.url === `/v1/verify/${RID}`) {
        res.end(
          JSON.stringify({
            request_id: RID,
            phone_number: '+79123456789',
            method: 'carrier_pigeon',
            status: 'in_flight',
            created_at: '2026-10-01T12:00:00Z',
            verified_at: null,
            expires_at: 'whenever',
          }),
        );
      } else if (req.method === 'GET' && req.url?.startsWith('/v1/usage')) {
        res.end(
          JSON.stringify({
            from: '2026-09-01',
            to: '2026-09-30',
            total_verifications: 2,
            successful: 1,
            success_rate: 0.5,
            total_cost: { amount: 4.5, currency: 'RUB' },
            by_method: { carrier_pigeon: 1, msgr1: 1 },
            by_status: { in_flight: 1, verified: 1 },
            daily: [],
          }),
        );
      } else {
        res.statusCode = 404;
        res.end(JSON.stringify({ error_code: 'not_found' }));
      }
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = VerificationApiClient.create({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      apiSecret: 's',
    });
  });

  afterAll(async () => {
    client.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('passes an unknown initiate method through as UnknownMethodInitiated with the raw object', async () => {
    const result = await client.initiate({ phoneNumber: '+79123456789', method: 'carrier_pigeon' });
    expect(result).toMatchObject({
      method: 'carrier_pigeon',
      requestId: RID,
      status: 'in_flight',
      cost: { amount: 1.5, currency: 'RUB' },
      codeLength: 6,
    });
    expect('raw' in result && result.raw.feather_colour).toBe('grey');
  });

  it('passes an unknown method and status through in a session, with an unparsable date left undefined', async () => {
    const session = await client.getSession(RID);
    expect(session.method).toBe('carrier_pigeon');
    expect(session.status).toBe('in_flight');
    expect(session.expiresAt).toBeUndefined();
    expect(session.createdAt).toStrictEqual(new Date('2026-10-01T12:00:00Z'));
  });

  it('keeps unknown keys of by_method and by_status', async () => {
    const usage = await client.getUsage();
    expect(usage.byMethod).toStrictEqual({ carrier_pigeon: 1, msgr1_otp: 1 });
    expect(usage.byStatus).toStrictEqual({ in_flight: 1, verified: 1 });
  });

  it('reuses keep-alive connections for consecutive calls (the sandbox does not expose its sockets)', async () => {
    for (let i = 0; i < 10; i++) await client.getSession(RID);
    // Every call of this describe block, these ten included, went over the first two connections: undici's
    // pool (the default transport) waits one event-loop turn before reusing a socket, so a call made as the
    // previous one ends takes a second one.
    expect(connections).toBeLessThanOrEqual(2);
  });
});

describe('client options', () => {
  it('refuses bad options at construction, naming the field and never echoing a value', () => {
    const base = { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 'top-secret-value' };
    expect(() => VerificationApiClient.create({ ...base, baseUrl: 'not a url' })).toThrow(/"baseUrl"/);
    expect(() => VerificationApiClient.create({ ...base, baseUrl: 'ftp://x' })).toThrow(/"baseUrl"/);
    expect(() => VerificationApiClient.create({ ...base, baseUrl: 'http://u:top-secret-value@h' })).toThrow(
      /must not contain credentials/,
    );
    expect(() => VerificationApiClient.create({ ...base, apiSecret: '' })).toThrow(/"apiSecret"/);
    expect(() => VerificationApiClient.create({ ...base, timeoutMs: 0 })).toThrow(/"timeoutMs"/);
    expect(() => VerificationApiClient.create({ ...base, maxRetries: 1.5 })).toThrow(/"maxRetries"/);
    const error = catchError(() =>
      VerificationApiClient.create({ ...base, baseUrl: 'http://u:top-secret-value@h' }),
    );
    expect(error.stack).toContain('must not contain credentials');
    expect(error.stack).not.toContain('top-secret-value');
  });
});

function catchError(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a throw');
}
