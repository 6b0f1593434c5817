import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, balanceOf, control } from './sandbox-client.js';

/** Arbitrary bodies never crash the sandbox or produce a 5xx; refused ones change nothing. */
describe('sandbox under arbitrary input', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
  });
  afterAll(async () => {
    await sb.close();
  });

  const bodies = fc.oneof(
    fc.jsonValue(),
    fc.record(
      {
        phone_number: fc.oneof(
          fc.string(),
          fc.stringMatching(/^\+[0-9]{6,17}$/),
          fc.integer(),
          fc.constant(null),
        ),
        method: fc.oneof(fc.constantFrom('sms', 'msgr1', 'voice', 'operator_id', 'MSGR1', ''), fc.anything()),
        expiry_seconds: fc.oneof(
          fc.integer({ min: -10, max: 1000 }),
          fc.double(),
          fc.string(),
          fc.constant(null),
        ),
      },
      { requiredKeys: [] },
    ),
  );

  it('POST /v1/verify answers 201 or a 400 problem, and a refusal creates and charges nothing', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const before = await balanceOf(sb);
        const res = await api(sb, 'POST', '/v1/verify', { raw: JSON.stringify(body) });
        if (res.status === 201) return;
        expect(res.status).toBe(400); // every method is enabled for the demo account, so never 403 here
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        expect(await balanceOf(sb)).toBe(before);
      }),
      { numRuns: 150 },
    );
  });

  it('POST /v1/verify/check and the control API never answer 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.string(), async (body, segment) => {
        const check = await api(sb, 'POST', '/v1/verify/check', { raw: JSON.stringify(body) });
        expect(check.status).toBeLessThan(500);
        const path = `/sessions/${encodeURIComponent(segment)}/call`;
        expect((await control(sb, 'POST', path, body)).status).toBeLessThan(500);
        expect((await control(sb, 'POST', '/faults', body)).status).toBeLessThan(500);
        sb.clearFaults();
        expect((await control(sb, 'POST', '/accounts', body)).status).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
  });
});
