/**
 * The operator's line of a cancel names the journey's step as the cancel's last look at the API found it,
 * not as stored before it: a session that failed upstream (no webhook told the host) is logged failed, the
 * same look that emitted its outcome.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { CapturingLogger } from '../support/log-capture.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, type TestApp } from '../support/verification-app.js';
import { eventsOf, nextPhone, startHost } from '../webhooks/harness.js';

describe('a cancel’s log line', () => {
  const suite = sandboxSuite();
  let host: TestApp | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  it('names the status the cancel read fresh from the API, not the stored one', async () => {
    const logger = new CapturingLogger();
    host = await startHost('express', suite.sb, {
      logger,
      module: { webhooks: {}, logLevels: ['log', 'warn', 'error'] },
      receiveWebhooks: false,
    });
    const post = (route: string, body: Record<string, unknown>) =>
      call(host!.url, 'POST', `/verification/${route}`, body, { 'x-user': 'user-1' });
    const phone = nextPhone();
    const started = await post('start', { phone_number: phone, method: 'sms' });
    expect(started.body.status).toBe('sent');
    const [requestId] = suite.sb.sessionsFor(phone).map((s) => s.request_id);
    await suite.sb.fail(requestId!);

    const canceled = await post('cancel', { verification_id: started.body.verification_id });
    expect(canceled.body.status).toBe('canceled');
    expect(eventsOf(host, requestId!)).toEqual(['verification.failed']);
    const lines = logger.lines.filter((line) => line.startsWith('log cancel route=cancel '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`request_id=${requestId!.slice(0, 8)}`);
    expect(lines[0]).toContain(' status=failed ');
  });
});
