/**
 * A number's proof and its other paid starts: a user who switched methods, or retried, and then proved
 * the number by another session (a late reverse call, a code of a later step) is no shortfall of its
 * country's users. Those starts leave the country's own counts (window, day, week, last minutes), once,
 * at most OWNER_RETRIES of them, for a window; its range, prefix and callers keep them unconverted.
 */
import { describe, expect, it } from '@jest/globals';
import type { VerificationMethod } from '../core/verification-method.js';
import { OWNER_RETRIES } from './pumping-rules.js';
import {
  attempt,
  fromNetwork as from,
  MINUTE,
  ownRange,
  pumpingHarness,
  verifiedEvent,
} from '../../test/protection/pumping-harness.js';

const PHONE = ownRange(1);
const proof = (requestId: string, method: VerificationMethod = 'sms', phoneNumber = PHONE) => ({
  ...verifiedEvent(requestId, phoneNumber),
  method,
});
/** A switch of the number's journey to a paid method (no callers: they were counted at its start). */
const switchTo = (method: VerificationMethod) =>
  attempt(PHONE, { method, switchedFrom: 'reverse_flash_call', clientKey: '10.1.0.1', ip: '10.1.0.1' });

describe('PumpingDefence: a proof takes its number’s other paid starts back from its country', () => {
  const defence = pumpingHarness();

  async function made() {
    const d = defence();
    /** The country's counts and the range's, read as a start of another number would. */
    const read = async () => {
      const counts = (await d.pumping.assess(from('+79260019999', 900)))!.counts;
      const country = counts.get('country:RU')!;
      const range = counts.get('range:+7926001')!;
      return {
        country: [country.starts, country.verified],
        day: country.day!.starts,
        week: country.week!.starts,
        recent: country.recent,
        range: [range.starts, range.verified],
      };
    };
    return { ...d, read };
  }

  it('a late reverse call after a switch: the first step is free, the switch leaves the country, not the range', async () => {
    const { pumping, start, read } = await made();
    expect(await start(from(PHONE, 1, { method: 'reverse_flash_call' }))).toBe('ok');
    expect(await start(switchTo('flash_call'))).toBe('ok');
    expect(await read()).toEqual({ country: [1, 0], day: 1, week: 1, recent: 1, range: [1, 0] });
    await pumping.verified(proof('req-1', 'reverse_flash_call'));
    expect(await read()).toEqual({ country: [0, 0], day: 0, week: 0, recent: 0, range: [1, 0] });
  });

  it('the proving session’s own start is credited, not taken back; the others are', async () => {
    const { pumping, start, read } = await made();
    await start(from(PHONE, 1));
    await start(switchTo('flash_call'));
    await pumping.verified(proof('req-2', 'flash_call'));
    expect((await read()).country).toEqual([1, 1]);
    expect((await read()).range).toEqual([2, 1]);
  });

  it('once: a second proof of the number (its other step, another instance, at once) takes nothing more', async () => {
    const { pumping, start, read } = await made();
    await start(from(PHONE, 1));
    await start(switchTo('msgr1_otp'));
    await start(from(PHONE, 1, { method: 'reverse_flash_call' }));
    await Promise.all([
      pumping.verified(proof('req-3', 'reverse_flash_call')),
      pumping.verified(proof('req-3', 'reverse_flash_call')),
    ]);
    expect((await read()).country).toEqual([0, 0]);
    await pumping.verified(proof('req-2', 'msgr1_otp'));
    // req-2 left its country already: its proof credits its range, not the country a second time.
    expect(await read()).toMatchObject({ country: [0, 0], range: [2, 1] });
  });

  it(`at most ${OWNER_RETRIES} of its starts, the latest: past them a number's starts weigh like anyone's`, async () => {
    for (const [paid, left] of [
      [OWNER_RETRIES, 0],
      [OWNER_RETRIES + 1, 1],
      [OWNER_RETRIES + 2, 2],
    ] as const) {
      const { pumping, start, read } = await made();
      for (let i = 0; i < paid; i++) expect(await start(from(PHONE, 10 + i))).toBe('ok');
      expect(await start(from(PHONE, 1, { method: 'reverse_flash_call' }))).toBe('ok');
      await pumping.verified(proof(`req-${paid + 1}`, 'reverse_flash_call'));
      expect((await read()).country).toEqual([left, 0]);
    }
  });

  it('another number’s proof takes nothing back', async () => {
    const { pumping, start, read } = await made();
    await start(from(PHONE, 1));
    await start(from(ownRange(2), 2, { method: 'reverse_flash_call' }));
    await pumping.verified(proof('req-2', 'reverse_flash_call', ownRange(2)));
    expect((await read()).country).toEqual([1, 0]);
  });

  it('kept for a window from its start: a proof a minute before its end takes it back, a minute after does not', async () => {
    for (const [late, day] of [
      [-MINUTE, 0],
      [MINUTE, 1],
    ] as const) {
      const { pumping, start, read, clock } = await made();
      await start(from(PHONE, 1));
      clock.now += 60 * MINUTE + late;
      await pumping.verified(proof('req-9', 'reverse_flash_call'));
      expect((await read()).day).toBe(day);
    }
  });
});
