/**
 * What the operator is told of a new hold (`verification.fraud_suspected`, the warning, the metric): the
 * subject and rule that held, the counts that rule judged (a slow drip's are the day's), the number masked.
 */
import { describe, expect, it } from '@jest/globals';
import type { FraudSuspectedEvent } from '../core/verification-events.js';
import type { SubjectCounts } from './pumping-counts.js';
import { reportHold, type HoldReport } from './pumping-report.js';
import type { Held } from './pumping-verdict.js';

const NOW = Date.UTC(2026, 11, 3, 12);

function reported(hold: Partial<HoldReport>): { event: FraudSuspectedEvent; warned: unknown[] } {
  const events: FraudSuspectedEvent[] = [];
  const warned: unknown[] = [];
  reportHold(
    {
      logger: { warn: (...args: unknown[]) => void warned.push(args), error: () => undefined },
      metrics: { fraudSuspected: () => undefined, pumpingRefusal: () => undefined },
      announce: (event: FraudSuspectedEvent) => void events.push(event),
    } as unknown as Parameters<typeof reportHold>[0],
    {
      reason: 'range_held',
      mode: 'enforce',
      attempt: { phoneNumber: '+79161234567', owner: undefined, clientKey: undefined, ip: undefined },
      place: { range: '+7916123', prefix: '+7916', country: 'RU' },
      underAttack: false,
      held: undefined,
      counts: { starts: 40.4, verified: 1.6, known: false } as SubjectCounts,
      holdMs: 600_000,
      until: NOW + 600_000,
      ...hold,
    },
  );
  expect(events).toHaveLength(1);
  return { event: events[0]!, warned };
}

describe('a new hold as the operator reads it', () => {
  /** A subject's counts: 12 starts in the window, a slow drip's 300 in the day. */
  const counts = {
    starts: 12,
    verified: 0,
    known: false,
    day: { starts: 300.4, verified: 2.5, baseline: 0 },
  } as SubjectCounts;

  it("a slow drip's hold reports the day's counts, another rule's the window's", () => {
    const held = (rule: 'slow_drip' | 'unconverted') =>
      ({ kind: 'prefix', id: 'p', counts, rule, hold: undefined, running: true }) as Held;
    expect(reported({ held: held('slow_drip'), counts }).event).toMatchObject({
      subject: 'prefix',
      rule: 'slow_drip',
      counts: { starts: 300, verified: 3 },
    });
    expect(reported({ held: held('unconverted'), counts }).event.counts).toStrictEqual({
      starts: 12,
      verified: 0,
    });
  });

  it("the warning tells the operator what the event does: a slow drip's counts are the day's there too", () => {
    const held = {
      kind: 'prefix',
      id: 'p',
      counts,
      rule: 'slow_drip',
      hold: undefined,
      running: true,
    } as Held;
    const { warned } = reported({ reason: 'range_held', held, counts });
    expect(warned).toStrictEqual([
      [
        'pumping defence: starts that do not complete; hold started',
        {
          reason: 'range_held',
          mode: 'enforce',
          subject: 'prefix',
          rule: 'slow_drip',
          range: '+7916123',
          prefix: '+7916',
          country: 'RU',
          starts: 300,
          verified: 3,
          hold_ms: 600_000,
        },
      ],
    ]);
  });

  it("the spend cap's reserve (no subject held) is the country's, by its own rule; the number is masked", () => {
    const { event } = reported({ reason: 'spend_cap_reserve' });
    expect(event).toMatchObject({
      reason: 'spend_cap_reserve',
      subject: 'country',
      rule: 'spend_cap_reserve',
      counts: { starts: 40, verified: 2 },
      heldUntil: new Date(NOW + 600_000),
    });
    expect(event.phoneNumberMasked).not.toContain('1234567');
  });
});

describe("a new hold's event and its starter", () => {
  it('names the owner of the start that set it off, and no owner when the start had none', () => {
    const attempt = { phoneNumber: '+79161234567', owner: 'user-7', clientKey: undefined, ip: undefined };
    expect(reported({ attempt }).event.owner).toBe('user-7');
    expect(Object.keys(reported({}).event)).not.toContain('owner');
  });
});
