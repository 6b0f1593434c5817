/**
 * What an operator reads of the status route's reads in the module's log: one debug line per answer with
 * its own latency (milliseconds of this request, not of the clock), and a warning naming the session when
 * the API could not be asked and the page was answered the last known state.
 */
import { describe, expect, it } from '@jest/globals';
import { CapturingLogger } from '../support/log-capture.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { startHost, startSession } from '../webhooks/harness.js';

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
});
