/**
 * What an operator reads of the status route's reads in the module's log: one debug line per answer with
 * its own latency (milliseconds of this request, not of the clock), and a warning naming the session when
 * the API could not be asked and the page was answered the last known state.
 */
import { describe, expect, it } from '@jest/globals';
import { FlakyListener } from '../events/flaky-listener.js';
import { CapturingLogger } from '../support/log-capture.js';
import { openSse } from '../support/sse-client.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { reconcilerOf, startHost, startSession } from '../webhooks/harness.js';

const GET = 'GET /v1/verify/:id';

describe.each(PLATFORMS)('the status route’s log lines (%s)', (platform) => {
  const suite = sandboxSuite();

  const boot = async () => {
    const logger = new CapturingLogger();
    const host = await suite.boot(() =>
      startHost(platform, suite.sb, { logger, module: { logLevels: ['log', 'warn', 'error', 'debug'] } }),
    );
    return { host, logger };
  };

  it('a read is logged once at debug with its own latency in milliseconds', async () => {
    const { host, logger } = await boot();
    const s = await startSession(host, suite.sb, 'sms');
    const short = `${s.requestId.slice(0, 8)}…`;
    const res = await call(host.url, 'GET', `/verification/status/${s.verificationId}`, undefined, {
      'x-user': s.owner,
    });
    expect(res.status).toBe(200);
    const lines = logger.lines.filter((l) => l.startsWith('debug status route=status '));
    expect(lines).toHaveLength(1);
    const [, latency] = /latency_ms=(\d+)/.exec(lines[0]!) ?? [];
    expect(lines[0]).toContain(`method=sms request_id=${short} status=sent`);
    expect(Number(latency)).toBeLessThan(10_000);
  });

  it('the API down: the last known state answered, and a warning names the session and the upstream status', async () => {
    const { host, logger } = await boot();
    const s = await startSession(host, suite.sb, 'sms');
    const short = `${s.requestId.slice(0, 8)}…`;
    // One poll interval on, the route reads the API again: it answers 503.
    await suite.sb.advance(3000);
    suite.sb.addFault({ route: GET, kind: 'status', status: 503, count: 0 });
    try {
      const res = await call(host.url, 'GET', `/verification/status/${s.verificationId}`, undefined, {
        'x-user': s.owner,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'sent', method: 'sms' });
    } finally {
      suite.sb.clearFaults();
    }
    const warned = logger.lines.filter((l) => l.startsWith('warn status served from the last known state'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain(`route=status method=sms request_id=${short}`);
    expect(warned[0]).toMatch(/upstream_status=503/);
  });

  it("a host's listener that throws on the outcome a read learned: no stale-answer warning, and the event comes again", async () => {
    const logger = new CapturingLogger();
    // Webhooks never reach the host: the route's read learns the outcome.
    const host = await suite.boot(() =>
      startHost(platform, suite.sb, {
        logger,
        receiveWebhooks: false,
        providers: [FlakyListener],
        module: { logLevels: ['log', 'warn', 'error', 'debug'] },
      }),
    );
    const listener = host.app.get(FlakyListener);
    listener.failFirst = true;
    const s = await startSession(host, suite.sb, 'sms');
    await suite.sb.fail(s.requestId);
    await suite.sb.advance(3000);
    const read = () =>
      call(host.url, 'GET', `/verification/status/${s.verificationId}`, undefined, { 'x-user': s.owner });
    // The page sees the outcome the read learned (stored before the listeners ran).
    const first = await read();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'failed' });
    expect(listener.of(s.requestId)).toEqual(['verification.failed!']);
    // The API answered: the page was not served a stale state, whatever the host's listener did.
    expect(logger.lines.filter((l) => l.includes('served from the last known state'))).toEqual([]);
    // The reconciler's next pass delivers it again.
    await suite.sb.advance(15_000);
    await reconcilerOf(host).runOnce();
    expect(listener.of(s.requestId)).toEqual(['verification.failed!', 'verification.failed']);
    expect((await read()).body).toMatchObject({ status: 'failed' });
  });
});

describe.each(PLATFORMS)(
  'the status answer at each step, on the route and the stream alike (%s)',
  (platform) => {
    const suite = sandboxSuite();

    it('an SMS session pending, then verified: every field, and none a verified session no longer has', async () => {
      const { sb } = suite;
      const host = await suite.boot(() => startHost(platform, sb, { receiveWebhooks: false }));
      const startedAt = sb.now();
      const s = await startSession(host, sb, 'sms');
      const headers = { 'x-user': s.owner };
      const route = async () =>
        (await call(host.url, 'GET', `/verification/status/${s.verificationId}`, undefined, headers)).body;
      const stream = (await openSse(`${host.url}/verification/status/${s.verificationId}/events`, headers))
        .stream!;
      try {
        const common = {
          verification_id: s.verificationId,
          method: 'sms',
          phone_number: expect.stringMatching(/^\+7\*{6}\d{4}$/),
          expires_at: sb.getSession(s.requestId)!.expires_at,
          poll_interval_ms: 2500,
          code_length: 6,
          methods_tried: ['sms'],
        };
        const pending = {
          ...common,
          status: 'sent',
          verified_at: null,
          awaiting_code: true,
          code_length_min: 6,
          code_length_max: 6,
          switch_methods: ['reverse_flash_call', 'flash_call', 'msgr1_otp', 'msgr2_bot', 'operator_id'],
          fallback_available_at: new Date(startedAt + 60_000).toISOString(),
        };
        expect(await route()).toEqual(pending);
        expect((await stream.statusCount(1))[0]).toEqual(pending);

        await sb.deliver(s.requestId);
        await sb.advance(61_000);
        const code = String(sb.getSession(s.requestId)!.code);
        const checked = await call(
          host.url,
          'POST',
          '/verification/check',
          { verification_id: s.verificationId, code },
          headers,
        );
        expect(checked.body).toMatchObject({ verified: true });
        // Over: no code entry, no range, nothing to switch to and no fallback time; verified at the check's time.
        const verified = {
          ...common,
          status: 'verified',
          verified_at: new Date(startedAt + 61_000).toISOString(),
          awaiting_code: false,
          switch_methods: [],
        };
        await stream.ends();
        expect(stream.statuses().at(-1)).toEqual(verified);
        expect(await route()).toEqual(verified);
      } finally {
        stream.close();
      }
    });
  },
);
