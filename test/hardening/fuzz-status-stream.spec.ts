import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { StatusStreamHub } from '../../src/http/status-stream.hub.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { openSse } from '../support/sse-client.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { statusId } from './support/fuzz-inputs.js';
import { expectProblem4xx, send } from './support/responses.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const TIMEOUT_MS = 120_000;

/**
 * Property-based fuzzing of the status stream route: hostile handles (forged, altered, other
 * sessions' bytes, over-long, odd characters) are refused before any stream starts, exactly as the
 * status route refuses them, reach nothing upstream, hold nothing, and take no slot of the
 * caller's stream cap (with a cap of 1, a real handle still opens a stream after every refusal).
 */
describe.each(PLATFORMS)('hardening: fuzzing the status stream route (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let host: TestApp;
  let handles: string[];

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        clock: () => sb.now(),
        reconcile: { enabled: false },
        statusStream: { maxPerClient: 1 },
      },
    });
    handles = [];
    for (const phone of ['+79123400011', '+79123400012']) {
      const res = await call(host.url, 'POST', '/verification/start', { phone_number: phone, method: 'sms' });
      expect(res.status).toBe(201);
      handles.push(res.body.verification_id as string);
    }
  });

  it(
    `GET /status/:id/events: ${RUNS} hostile ids are refused like the status route, holding nothing`,
    async () => {
      const hub = host.app.get(StatusStreamHub, { strict: false });
      sb.resetRequestCounts();
      await fc.assert(
        fc.asyncProperty(statusId(handles), async (id) => {
          const res = await send(`${host.url}/verification/status/${encodeURIComponent(id)}/events`, 'GET');
          if (platform === 'fastify' && id.length > 100) expect(res.status).toBe(414);
          else expect(expectProblem4xx(res).error_code).toBe('not_found');
          expect(hub.size).toBe(0);
          expect(sb.requestCount()).toBe(0);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      // No refusal took a slot: the one allowed stream still opens.
      const opened = await openSse(`${host.url}/verification/status/${handles[0]}/events`);
      expect(opened.status).toBe(200);
      await opened.stream!.statusCount(1);
      opened.stream!.close();
    },
    TIMEOUT_MS,
  );
});
