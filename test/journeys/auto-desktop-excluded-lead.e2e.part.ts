/**
 * Attack on the cold desktop start (unchosenOrder): before any figures, a desktop `auto` start does not
 * begin with the reverse call (dialled by hand from the phone). The host also excludes a method for
 * desktop (`orchestration.exclude.desktop`): when the method unchosenOrder would have put first is one
 * the hint excludes, the next code method must lead, not the reverse call the exclusion leaves first.
 */
import { describe, expect, it } from '@jest/globals';
import { PLATFORMS } from '../support/verification-app.js';
import { freshPhone, journeyFixture, journeyHost, start, status } from './journey-host.js';

describe.each(PLATFORMS)('journeys: a cold desktop start under a desktop exclusion (%s)', (platform) => {
  const fx = journeyFixture();

  it('a desktop start with flash_call excluded begins with the next code method, not the reverse call', async () => {
    // The sandbox's price order: reverse flash call 0.25, flash call 0.80, then the messengers, …, SMS.
    const host = await journeyHost(fx, platform, { orchestration: { exclude: { desktop: ['flash_call'] } } });
    const phone = freshPhone();
    const desktop = await start(host, { phone_number: phone, method: 'auto', device: 'desktop' });
    expect(desktop.status).toBe(201);
    expect(desktop.body.method).toBe('msgr1_otp');
    expect(fx.sb.sessionsFor(phone).map((s) => s.method)).toEqual(['msgr1_otp']);
    // The reverse call stays among the journey's switches; the excluded flash call does not.
    const journey = await status(host, desktop.body.verification_id);
    expect(journey.body.switch_methods).toContain('reverse_flash_call');
    expect(journey.body.switch_methods).not.toContain('flash_call');
    // A phone's page still starts with the reverse call.
    const mobile = await start(host, { phone_number: freshPhone(), method: 'auto', device: 'mobile' });
    expect(mobile.body.method).toBe('reverse_flash_call');
  });

  it('a desktop start whose exclusions leave only the reverse call and one code method begins with the code method', async () => {
    const host = await journeyHost(fx, platform, {
      methods: ['reverse_flash_call', 'flash_call', 'sms'],
      orchestration: { exclude: { desktop: ['flash_call'] } },
    });
    const desktop = await start(host, { phone_number: freshPhone(), device: 'desktop' });
    expect(desktop.status).toBe(201);
    expect(desktop.body.method).toBe('sms');
  });
});
