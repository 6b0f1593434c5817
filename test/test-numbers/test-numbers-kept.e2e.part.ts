/**
 * Test sessions kept per network: a client network (an IPv6 /48 here) keeps 5 test sessions of one
 * number an hour (KEPT_TEST_SESSIONS_PER_NETWORK_HOUR; the number 10 across networks); its further ones are spare (request id
 * `test_x…`, stored in the network's slots: test-numbers-spare-slots) and work alike; another network, or the next hour, keeps
 * its own again.
 */
import { describe, expect, it } from '@jest/globals';
import { isSpareTestSession } from '../../src/core/test-session.js';
import { KEPT_TEST_SESSIONS_PER_NETWORK_HOUR as KEPT } from '../../src/test-numbers/test-number-sessions.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const HOUR = 3_600_000;
const CODE = '123456';

describe.each(PLATFORMS)('test sessions kept per network and hour (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  const reviewer = platform === 'express' ? '+79990000011' : '+79990000012';

  it('the 5th test start of a /48 is kept, the 6th and 7th spare (and verify alike); another /48 and the next hour (not one tick before) are kept', async () => {
    suite.host = await startAccountHost(platform, suite.sb, {
      trustProxy: true,
      module: {
        limits: {},
        owner: undefined,
        history: {},
        testNumbers: { numbers: [{ phoneNumber: reviewer, code: CODE }] },
      },
    });
    const history = suite.host.app.get(VerificationHistory);
    const post = (path: string, body: unknown, ip: string) =>
      call(suite.host!.url, 'POST', `/verification/${path}`, body, { 'x-forwarded-for': ip });
    const start = (ip: string) => post('start', { phone_number: reviewer, method: 'sms' }, ip);
    const spares = async () =>
      (await history.list({ phoneNumber: reviewer }))
        .filter((e) => e.kind === 'start')
        .map((e) => isSpareTestSession(e.requestId));

    const answers: Awaited<ReturnType<typeof start>>[] = [];
    for (let i = 0; i < KEPT + 2; i++) answers.push(await start(`2001:db8:51:${i.toString(16)}::1`));
    expect(answers.map((a) => a.status)).toEqual(Array(KEPT + 2).fill(201));
    expect(await spares()).toEqual([...Array(KEPT).fill(false), true, true]);

    // A spare session works as a kept one: its right code verifies it.
    const check = { verification_id: answers[KEPT]!.body.verification_id, code: CODE };
    expect((await post('check', check, `2001:db8:51:${KEPT.toString(16)}::1`)).body).toMatchObject({
      verified: true,
    });

    expect((await start('2001:db8:52::1')).status).toBe(201);
    // The network's hour runs from its first test start: one tick before its end, still spare.
    await suite.sb.advance(HOUR - 1);
    expect((await start('2001:db8:51:ff::1')).status).toBe(201);
    await suite.sb.advance(1);
    expect((await start('2001:db8:51:100::1')).status).toBe(201);
    expect((await spares()).slice(KEPT + 2)).toEqual([false, true, false]);

    // A switch plays a test session too: the network's next one past its 5 this hour is spare.
    const more: Awaited<ReturnType<typeof start>>[] = [];
    for (let i = 0; i < KEPT - 1; i++) more.push(await start(`2001:db8:51:${(0x101 + i).toString(16)}::1`));
    expect(more.map((a) => a.status)).toEqual(Array(KEPT - 1).fill(201));
    const switchOf = (answer: (typeof more)[number], ip: string) =>
      post('switch', { verification_id: answer.body.verification_id, method: 'flash_call' }, ip);
    expect(
      (await switchOf(more[KEPT - 2]!, `2001:db8:51:${(0x101 + KEPT - 2).toString(16)}::1`)).status,
    ).toBe(201);
    expect((await switchOf(answers[0]!, '2001:db8:53::1')).status).toBe(201);
    const switches = (await history.list({ phoneNumber: reviewer })).filter((e) => e.kind === 'switch');
    expect(switches.map((e) => isSpareTestSession(e.requestId))).toEqual([true, false]);
  }, 60_000);
});
