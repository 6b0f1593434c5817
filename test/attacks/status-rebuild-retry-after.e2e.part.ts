/**
 * A lost record's rebuild (after a restart on MemoryStore) past its caller's status meter is answered 429
 * with a Retry-After in seconds: the meter's 3 s window, so the page comes back when the window is over
 * (not in 3,000 s, nor at once). Written against planted bug G04 (the window given in milliseconds). The
 * status stream's first read is the same rebuild, metered as the route's.
 */
import { describe, expect, it } from '@jest/globals';
import { openSse, type SseOpen } from '../support/sse-client.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { lostRecordsSuite, numbersFrom } from '../verified-phone/guard-host.js';

const phoneNumber = numbersFrom('+7916449');

describe.each(PLATFORMS)('a lost record past its reader meter (%s)', (platform: Platform) => {
  const lost = lostRecordsSuite(platform);
  const { suite } = lost;

  it('is answered 429 with Retry-After: 3 (seconds), and read again once the window is over', async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    await lost.boot(account);
    const handles: string[] = [];
    for (let i = 0; i < 9; i++) handles.push(await lost.start(phoneNumber()));
    // A deploy: the MemoryStore is new, the sessions are pending upstream.
    await lost.deploy(account);

    const reads = [];
    for (const id of handles) reads.push(await call(suite.host!.url, 'GET', `/verification/status/${id}`));
    const refused = reads.filter((read) => read.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const read of refused) {
      expect(read.headers.get('retry-after')).toBe('3');
      expect(read.headers.get('content-type')).toContain('application/problem+json');
      expect(read.body).toMatchObject({
        status: 429,
        error_code: 'rate_limit_exceeded',
        detail: 'Too many status reads, try again later',
      });
    }

    await suite.sb.advance(3_100);
    const again = await call(suite.host!.url, 'GET', `/verification/status/${handles[handles.length - 1]}`);
    expect(again.status).toBe(200);
  });

  it('the status stream, its twin, meters the rebuild alike: past the meter a stream is refused 429 with Retry-After: 3', async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    await lost.boot(account);
    const handles: string[] = [];
    for (let i = 0; i < 9; i++) handles.push(await lost.start(phoneNumber()));
    await lost.deploy(account);

    // One stream at a time (each closed before the next): the per-client stream cap stays out of the way.
    const opens: SseOpen[] = [];
    for (const id of handles) {
      const open = await openSse(`${suite.host!.url}/verification/status/${id}/events`);
      open.stream?.close();
      opens.push(open);
    }
    const refused = opens.filter((open) => open.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const open of refused) expect(open.headers.get('retry-after')).toBe('3');
  });
});
