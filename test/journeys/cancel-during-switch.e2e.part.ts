/**
 * A cancel while the journey's switch waits for the API: the switch holds the journey's next step, so
 * the cancel is 409 `switch_in_progress` (nothing canceled, nothing a frontend must undo); the switch
 * then lands its step and the journey goes on with it. Were the two to claim different steps, both
 * would go through: the cancel answered `canceled`, and the switch, saving the journey it read before,
 * would write the cancel away (the journey pending again on the new method).
 */
import { describe, expect, it } from '@jest/globals';
import { PLATFORMS } from '../support/verification-app.js';
import {
  cancel,
  freshPhone,
  journeyFixture,
  journeyHost,
  problem,
  start,
  status,
  switchMethod,
} from './journey-host.js';

describe.each(PLATFORMS)('journeys: a cancel during a switch (%s)', (platform) => {
  const fx = journeyFixture();

  it('is 409 switch_in_progress; the switch lands its step and the journey is not canceled', async () => {
    const host = await journeyHost(fx, platform);
    const first = await start(host, { phone_number: freshPhone(), method: 'sms' });
    expect(first.status).toBe(201);
    const id = first.body.verification_id as string;
    await fx.sb.advance(5000);

    // The API answers the switch's initiation late: the cancel comes while it waits.
    fx.sb.resetRequestCounts();
    fx.sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 600, count: 1 });
    const switching = switchMethod(host, id);
    const until = Date.now() + 5000;
    while (fx.sb.requestCount('POST /v1/verify') === 0 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10));
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(1);

    const canceled = await cancel(host, id);
    expect(problem(canceled)).toMatchObject({ status: 409, error_code: 'switch_in_progress' });

    const switched = await switching;
    expect({ status: switched.status, method: switched.body.method }).toEqual({
      status: 201,
      method: 'reverse_flash_call',
    });
    const after = await status(host, id);
    expect(after.body).toMatchObject({
      method: 'reverse_flash_call',
      status: switched.body.status,
      methods_tried: ['sms', 'reverse_flash_call'],
    });
    expect(after.body.status).not.toBe('canceled');
    // Once the switch is done, a cancel goes through.
    expect((await cancel(host, id)).body).toEqual({ verification_id: id, status: 'canceled' });
  });
});
