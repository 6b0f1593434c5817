/**
 * `limits.assessStart`, the host's risk hook, over real HTTP against the sandbox: from the host's own
 * lookup (line type, operator, SIM-change date) it allows, grades (only methods charged on proof),
 * asks for a step-up (the host's captcha) or refuses; its answer and reason reach the events and the
 * history; a hook that throws fails closed (503) and the number reaches neither the answer nor the log;
 * `beforeStart` still runs beside it.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import type {
  StartAssessment,
  StartAssessmentContext,
  VerificationModuleOptions,
} from '../../src/options/verification.options.js';
import { CapturingLogger } from '../support/log-capture.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const DAY = 86_400_000;
const SIM_CHANGE_WINDOW_MS = 3 * DAY;
const INITIATIONS = 'POST /v1/verify';

let serial = 0;
const phoneNumber = () =>
  `+7916445${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

/** The host's own lookup: what its carrier-data provider said of a number. */
interface LineFacts {
  lineType: 'mobile' | 'voip';
  operator: string;
  simChangedAt?: number;
}

type Headers = Record<string, string | string[] | undefined>;

describe.each(PLATFORMS)('assessStart, the risk hook (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  const lookup = new Map<string, LineFacts>();
  const seen: StartAssessmentContext[] = [];
  const logger = new CapturingLogger();

  /** The host's rule: voip refused, a recent SIM change needs the captcha, a risky operator graded. */
  const assess = (ctx: StartAssessmentContext): StartAssessment => {
    seen.push(ctx);
    const facts = lookup.get(ctx.phoneNumber) ?? { lineType: 'mobile', operator: 'mts' };
    if (facts.lineType === 'voip') return { decision: 'refuse', reason: 'voip_line' };
    const captcha = (ctx.request as { headers: Headers }).headers['x-captcha'] === 'solved';
    if (facts.simChangedAt !== undefined && suite.sb.now() - facts.simChangedAt < SIM_CHANGE_WINDOW_MS)
      return captcha
        ? { decision: 'allow', reason: 'sim_changed', challengePassed: true }
        : { decision: 'step_up', reason: 'sim_changed', challenge: 'captcha' };
    if (facts.operator === 'risky') return { decision: 'grade', reason: 'risky_operator' };
    return { decision: 'allow', reason: 'clean' };
  };

  async function boot(limits: VerificationModuleOptions['limits'] = {}) {
    suite.host = await createTestApp({
      platform,
      module: moduleOptions(suite.sb, {
        limits: { enabled: false, assessStart: assess, ...limits },
        history: {},
        logger,
        purposes: { step_up: {} },
      }),
    });
    return suite.host;
  }
  const start = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    call(suite.host!.url, 'POST', '/verification/start', body, { 'x-user': 'alice', ...headers });
  const status = (id: unknown) =>
    call(suite.host!.url, 'GET', `/verification/status/${String(id)}`, undefined, { 'x-user': 'alice' });
  const history = (phone: string) => suite.host!.app.get(VerificationHistory).list({ phoneNumber: phone });

  it('allow: the answer and reason reach the event, with the purpose, the operator looked up by the host', async () => {
    const host = await boot();
    const phone = phoneNumber();
    const started = await start({ phone_number: phone, method: 'reverse_flash_call', purpose: 'step_up' });
    expect(started.status).toBe(201);
    expect(seen.at(-1)).toMatchObject({
      phoneNumber: phone,
      method: 'reverse_flash_call',
      purpose: 'step_up',
    });
    await suite.sb.call(suite.sb.sessionsFor(phone)[0]!.request_id, phone);
    await status(started.body.verification_id);
    expect(host.events.find((e) => e.phoneNumber === phone)).toMatchObject({
      event: 'verification.verified',
      purpose: 'step_up',
      assessment: { decision: 'allow', reason: 'clean' },
    });
    expect((await history(phone))[0]).toMatchObject({
      kind: 'start',
      assessment: { decision: 'allow', reason: 'clean' },
    });
  });

  it('refuse: 403 start_refused with the reason, nothing sent, the refusal in history with the answer', async () => {
    await boot();
    const phone = phoneNumber();
    lookup.set(phone, { lineType: 'voip', operator: 'x' });
    const before = suite.sb.requestCount(INITIATIONS);
    const refused = await start({ phone_number: phone, method: 'sms' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ status: 403, error_code: 'start_refused', reason: 'voip_line' });
    expect(suite.sb.requestCount(INITIATIONS)).toBe(before);
    expect(await history(phone)).toEqual([
      expect.objectContaining({
        kind: 'refusal',
        errorCode: 'start_refused',
        // The refusal's label, as for beforeStart's; the host's reason is in its answer.
        reason: 'hook',
        assessment: { decision: 'refuse', reason: 'voip_line' },
      }),
    ]);
  });

  it('step-up: 403 step_up_required naming the challenge until it is passed, at the SIM-change bound of the host', async () => {
    const host = await boot();
    const recent = phoneNumber();
    const settled = phoneNumber();
    // One tick inside the host's window, and exactly at its end.
    lookup.set(recent, {
      lineType: 'mobile',
      operator: 'mts',
      simChangedAt: suite.sb.now() - SIM_CHANGE_WINDOW_MS + 1,
    });
    lookup.set(settled, {
      lineType: 'mobile',
      operator: 'mts',
      simChangedAt: suite.sb.now() - SIM_CHANGE_WINDOW_MS,
    });
    const before = suite.sb.requestCount(INITIATIONS);
    const asked = await start({ phone_number: recent, method: 'reverse_flash_call' });
    expect(asked.body).toMatchObject({
      status: 403,
      error_code: 'step_up_required',
      reason: 'sim_changed',
      challenge: 'captcha',
    });
    expect(suite.sb.requestCount(INITIATIONS)).toBe(before);
    expect((await start({ phone_number: settled, method: 'sms' })).status).toBe(201);
    const passed = await start(
      { phone_number: recent, method: 'reverse_flash_call' },
      { 'x-captcha': 'solved' },
    );
    expect(passed.status).toBe(201);
    await suite.sb.call(suite.sb.sessionsFor(recent)[0]!.request_id, recent);
    await status(passed.body.verification_id);
    expect(host.events.find((e) => e.phoneNumber === recent)?.assessment).toEqual({
      decision: 'allow',
      reason: 'sim_changed',
      challengePassed: true,
    });
    expect((await history(recent)).map((e) => e.assessment?.decision)).toEqual([
      'step_up',
      'allow',
      undefined,
    ]);
    // A step-up has no refusal label: its entry keeps the host's reason.
    expect((await history(recent))[0]).toMatchObject({
      kind: 'refusal',
      errorCode: 'step_up_required',
      reason: 'sim_changed',
    });
  });

  it('grade: a method charged on delivery is 409 method_held offering those charged on proof; auto takes one', async () => {
    const host = await boot();
    const phone = phoneNumber();
    lookup.set(phone, { lineType: 'mobile', operator: 'risky' });
    const before = suite.sb.requestCount(INITIATIONS);
    const held = await start({ phone_number: phone, method: 'sms' });
    expect(held.status).toBe(409);
    expect(held.body).toMatchObject({ status: 409, error_code: 'method_held' });
    expect(held.body.offered_methods).toEqual(expect.arrayContaining(['reverse_flash_call']));
    expect(held.body.offered_methods).not.toContain('sms');
    expect(suite.sb.requestCount(INITIATIONS)).toBe(before);
    const auto = await start({ phone_number: phone });
    expect(auto.status).toBe(201);
    expect(['reverse_flash_call', 'msgr2_bot']).toContain(auto.body.method);
    if (auto.body.method === 'reverse_flash_call') {
      await suite.sb.call(suite.sb.sessionsFor(phone).at(-1)!.request_id, phone);
      await status(auto.body.verification_id);
      expect(host.events.find((e) => e.phoneNumber === phone)?.assessment).toEqual({
        decision: 'grade',
        reason: 'risky_operator',
      });
    }
  });

  it('a hook that throws (its message naming the number) fails closed: 503, the number in neither the answer nor the log', async () => {
    await boot({
      assessStart: (ctx) => {
        throw new Error(`lookup failed for ${ctx.phoneNumber}`);
      },
    });
    const phone = phoneNumber();
    const before = suite.sb.requestCount(INITIATIONS);
    const failed = await start({ phone_number: phone, method: 'sms' });
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({
      status: 503,
      error_code: 'service_unavailable',
      reason: 'assess_start_failed',
    });
    // The page may try again in 5 s: Retry-After in seconds, the hook's own back-off.
    expect(failed.headers.get('retry-after')).toBe('5');
    expect(failed.text).not.toContain(phone.slice(1));
    expect(logger.lines.join('\n')).not.toContain(phone.slice(1));
    // Only the error's name: its message is the host's (here it names the number; the logs' masking aside).
    expect(logger.lines.join('\n')).not.toContain('lookup failed');
    expect(logger.lines.join('\n')).toContain('assessStart hook threw');
    expect(suite.sb.requestCount(INITIATIONS)).toBe(before);
  });

  it('an answer of another shape, or a reason that could carry a number, is not taken as given', async () => {
    await boot({ assessStart: () => ({ decision: 'maybe' }) as unknown as StartAssessment });
    expect((await start({ phone_number: phoneNumber(), method: 'sms' })).body).toMatchObject({
      status: 503,
      reason: 'assess_start_failed',
    });
    await suite.host!.close();
    const phone = phoneNumber();
    await boot({ assessStart: (ctx) => ({ decision: 'refuse', reason: ctx.phoneNumber.slice(1) }) });
    const refused = await start({ phone_number: phone, method: 'sms' });
    expect(refused.body).toMatchObject({ status: 403, error_code: 'start_refused', reason: 'unspecified' });
    expect(refused.text).not.toContain(phone.slice(1));
  });

  it('beforeStart still runs beside it: its refusal stands after an allow', async () => {
    await boot({ beforeStart: () => ({ allow: false, reason: 'host_rule' }) });
    expect((await start({ phone_number: phoneNumber(), method: 'sms' })).body).toMatchObject({
      status: 403,
      error_code: 'start_refused',
      reason: 'host_rule',
    });
  });
});
