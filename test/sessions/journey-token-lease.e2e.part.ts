/**
 * A journey put back from its `journey_token` (the store lost it: a restart on MemoryStore) is kept as
 * long as its current step's record, as a journey the module saved itself is: through the day after
 * the current step ends, not only through the day after its first step ends. Its handle alone then
 * still answers the current step's outcome, on Express and Fastify.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { nextPhone, startHost } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const DAY_MS = 24 * 3_600_000;
/** The sessions' lifetime (the module's and the sandbox's default). */
const SESSION_MS = 300_000;
/** When the journey switches from its first step. */
const SWITCH_AFTER_MS = 61_000;

describe.each(PLATFORMS)(
  'a journey put back from its token is kept as its current step is (%s)',
  (platform) => {
    const OWNER = { 'x-user': 'user-token-lease' };
    const suite = sandboxSuite();
    let sb: VerificationSandbox;
    const hosts: TestApp[] = [];
    beforeAll(async () => {
      sb = suite.sb;
    });
    afterEach(async () => {
      for (const host of hosts.splice(0)) await host.close();
    });

    const boot = async (p: Platform): Promise<TestApp> => {
      const host = await startHost(p, sb, { receiveWebhooks: false });
      hosts.push(host);
      return host;
    };
    const stop = async (host: TestApp) => {
      hosts.splice(hosts.indexOf(host), 1);
      await host.close();
    };
    const query = (token?: string) =>
      token === undefined ? '' : `?journey_token=${encodeURIComponent(token)}`;
    const status = (host: TestApp, id: string, token?: string) =>
      call(host.url, 'GET', `/verification/status/${id}${query(token)}`, undefined, OWNER);
    const post = (host: TestApp, route: string, body: Record<string, unknown>) =>
      call(host.url, 'POST', `/verification/${route}`, body, OWNER);

    it('the day after its first step ends, the handle alone still answers the verified current step', async () => {
      const before = await boot(platform);
      const phone = nextPhone();
      const startedAt = sb.now();
      const started = await post(before, 'start', { phone_number: phone, method: 'sms' });
      expect(started.status).toBe(201);
      const id = started.body.verification_id as string;
      await sb.advance(SWITCH_AFTER_MS);
      const moved = await post(before, 'switch', { verification_id: id, method: 'flash_call' });
      expect(moved.status).toBe(201);
      const token = moved.body.journey_token as string;
      await stop(before);

      // A restart: the new MemoryStore has nothing; the token puts the journey back.
      const after = await boot(platform);
      expect((await status(after, id, token)).body).toMatchObject({
        method: 'flash_call',
        methods_tried: ['sms', 'flash_call'],
      });
      const [callId] = sb.sessionsFor(phone).map((s) => s.request_id);
      await sb.deliver(callId!);
      const checked = await post(after, 'check', {
        verification_id: id,
        code: sb.getSession(callId!)!.code!,
        journey_token: token,
      });
      expect(checked.body).toMatchObject({ status: 'verified', verified: true });

      // Past the day after the first step's end, within the day after the current step's end.
      await sb.advance(startedAt + SESSION_MS + DAY_MS + SWITCH_AFTER_MS / 2 - sb.now());
      const late = await status(after, id);
      expect({ status: late.status, body: late.body }).toMatchObject({
        status: 200,
        body: { verification_id: id, method: 'flash_call', status: 'verified' },
      });
    });
  },
);
