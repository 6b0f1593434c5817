import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { StandardWebhooksVerifier } from './standard-webhooks.verifier.js';

const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

function headers(id: string, timestamp: number | string, signature: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

describe('StandardWebhooksVerifier agrees with the standardwebhooks package', () => {
  const secretArb = fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .map((b) => `whsec_${Buffer.from(b).toString('base64')}`);
  const idArb = fc.stringMatching(/^msg_[A-Za-z0-9]{1,40}$/);
  // Full Unicode (Cyrillic, emoji, …) so that any byte/string confusion would show.
  const bodyArb = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.json());

  it('produces the same signature, byte for byte', () => {
    fc.assert(
      fc.property(
        secretArb,
        idArb,
        fc.integer({ min: 0, max: 4_000_000_000 }),
        bodyArb,
        (secret, id, ts, body) => {
          const ours = new StandardWebhooksVerifier(secret).sign(id, ts, body);
          const theirs = new Webhook(secret).sign(id, new Date(ts * 1000), body);
          expect(ours).toBe(theirs);
          expect(new StandardWebhooksVerifier(secret).sign(id, ts, Buffer.from(body, 'utf8'))).toBe(theirs);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('accepts what the package signs and refuses what it refuses (tampered body, id, timestamp, secret)', () => {
    fc.assert(
      fc.property(
        secretArb,
        idArb,
        bodyArb,
        fc.constantFrom('body', 'id', 'ts', 'secret', 'none'),
        (secret, id, body, tamper) => {
          const now = Math.floor(Date.now() / 1000);
          const signature = new Webhook(secret).sign(id, new Date(now * 1000), body);
          const sentBody = tamper === 'body' ? `${body} ` : body;
          const sentId = tamper === 'id' ? `${id}x` : id;
          const sentTs = tamper === 'ts' ? now - 1 : now;
          const checkedWith = tamper === 'secret' ? newSecret() : secret;
          const h = headers(sentId, sentTs, signature);
          const ours = new StandardWebhooksVerifier(checkedWith).verify(Buffer.from(sentBody, 'utf8'), h);
          let theirs = true;
          try {
            new Webhook(checkedWith).verify(sentBody, h, { jsonParse: false });
          } catch {
            theirs = false;
          }
          expect(ours).toBe(theirs);
          expect(ours).toBe(tamper === 'none');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('uses the same tolerance rule: 300 s either way by default, boundary included', () => {
    const secret = newSecret();
    const now = Math.floor(Date.now() / 1000);
    // The reference library reads Date.now() itself: held at `now`, so a second ticking over during the
    // loop cannot move its boundary away from ours.
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now * 1000);
    try {
      for (const offset of [-301, -300, 0, 300, 301]) {
        const ts = now + offset;
        const signature = new Webhook(secret).sign('msg_1', new Date(ts * 1000), '{}');
        const ours = new StandardWebhooksVerifier(secret, { clock: () => now * 1000 }).verify(
          Buffer.from('{}'),
          headers('msg_1', ts, signature),
        );
        let theirs = true;
        try {
          new Webhook(secret).verify('{}', headers('msg_1', ts, signature), { jsonParse: false });
        } catch {
          theirs = false;
        }
        expect({ offset, ours }).toStrictEqual({ offset, ours: theirs });
      }
    } finally {
      clock.mockRestore();
    }
  });
});

describe('StandardWebhooksVerifier', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('measures the tolerance on its clock, not on Date.now', () => {
    const secret = newSecret();
    const virtualNow = Date.now() + 3_600_000; // a test clock one hour ahead
    const ts = Math.floor(virtualNow / 1000);
    const verifier = new StandardWebhooksVerifier(secret, { clock: () => virtualNow, toleranceSeconds: 10 });
    const signature = verifier.sign('msg_a', ts, '{"a":1}');
    expect(verifier.check(Buffer.from('{"a":1}'), headers('msg_a', ts, signature))).toBeUndefined();
    expect(
      verifier.check(
        Buffer.from('{"a":1}'),
        headers('msg_a', ts - 11, verifier.sign('msg_a', ts - 11, '{"a":1}')),
      ),
    ).toBe('stale_timestamp');
    expect(
      verifier.check(
        Buffer.from('{"a":1}'),
        headers('msg_a', ts + 11, verifier.sign('msg_a', ts + 11, '{"a":1}')),
      ),
    ).toBe('stale_timestamp');
  });

  it('accepts any of several secrets (rotation) and any of several signatures in the header', () => {
    const [oldSecret, newer, unrelated] = [newSecret(), newSecret(), newSecret()];
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from('{"type":"verification.verified"}');
    const byOld = new StandardWebhooksVerifier(oldSecret).sign('msg_r', now, body);
    const byUnrelated = new StandardWebhooksVerifier(unrelated).sign('msg_r', now, body);
    const rotating = new StandardWebhooksVerifier([newer, oldSecret]);
    expect(rotating.verify(body, headers('msg_r', now, byOld))).toBe(true);
    expect(rotating.verify(body, headers('msg_r', now, `${byUnrelated} ${byOld}`))).toBe(true);
    expect(rotating.verify(body, headers('msg_r', now, byUnrelated))).toBe(false);
    expect(new StandardWebhooksVerifier(newer).verify(body, headers('msg_r', now, byOld))).toBe(false);
  });

  it('says why it refuses: missing headers, a malformed timestamp, no matching signature, a wrong version', () => {
    const secret = newSecret();
    const verifier = new StandardWebhooksVerifier(secret);
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from('{}');
    const good = verifier.sign('msg_x', now, body);
    // Each of the three missing, or empty, alone.
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      for (const value of [undefined, '']) {
        const partial = { ...headers('msg_x', now, good), [name]: value };
        expect({ name, value, reason: verifier.check(body, partial) }).toStrictEqual({
          name,
          value,
          reason: 'missing_headers',
        });
      }
    }
    // Digits only: a timestamp with anything before or after them is no timestamp.
    for (const timestamp of ['12abc', `x${now}`, ` ${now}`, `${now}.5`])
      expect({ timestamp, reason: verifier.check(body, headers('msg_x', timestamp, good)) }).toStrictEqual({
        timestamp,
        reason: 'bad_timestamp',
      });
    expect(verifier.check(body, headers('msg_x', now, good.replace(/^v1,/, 'v2,')))).toBe(
      'no_matching_signature',
    );
    expect(verifier.check(body, headers('msg_x', now, 'v1,AAAA'))).toBe('no_matching_signature');
    // A signature that differs only in base64 padding is refused, as the reference library does.
    expect(verifier.check(body, headers('msg_x', now, good.replace(/=$/, '')))).toBe('no_matching_signature');
    // Header values as arrays (some adapters) are read by their first value.
    expect(
      verifier.check(body, {
        'webhook-id': ['msg_x'],
        'webhook-timestamp': [String(now)],
        'webhook-signature': [good],
      }),
    ).toBeUndefined();
  });

  it('decodes its secrets once, at construction, not on every request', () => {
    const secret = newSecret();
    const verifier = new StandardWebhooksVerifier(secret);
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from('{"n":1}');
    const signature = verifier.sign('msg_c', now, body);
    const from = jest.spyOn(Buffer, 'from');
    for (let i = 0; i < 5; i++) expect(verifier.verify(body, headers('msg_c', now, signature))).toBe(true);
    const secretDecodes = from.mock.calls.filter((args) => (args as unknown[])[1] === 'base64');
    expect(secretDecodes).toStrictEqual([]);
  });

  it('refuses an empty secret at construction without quoting it', () => {
    expect(() => new StandardWebhooksVerifier('whsec_')).toThrow(
      'a webhook secret must be "whsec_" followed by base64 bytes',
    );
    expect(() => new StandardWebhooksVerifier([])).toThrow('at least one secret');
    // A secret read from configuration as something else than text (a number, a missing variable).
    for (const secret of [42, undefined])
      expect(() => new StandardWebhooksVerifier([secret as unknown as string])).toThrow(
        new TypeError('a webhook secret must be a string'),
      );
  });
});
