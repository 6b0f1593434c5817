/**
 * A lost record's rebuild takes its caller's metered read, but a handle the API was found not to know
 * (remembered as unknown after its first rebuild) answers 404 from the store and takes none: a caller
 * polling such handles (a test session lost with its MemoryStore, a session the API forgot) never
 * spends the reads another verification of its address needs to be rebuilt.
 */
import { describe, expect, it } from '@jest/globals';
import { STATUS_READS_PER_CALLER } from '../../src/protection/status-read-meter.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { lostRecordsSuite, numbersFrom } from '../verified-phone/guard-host.js';

const TEST_NUMBER = '+79990004431';
const phoneNumber = numbersFrom('+7916450');

describe.each(PLATFORMS)('handles the API does not know and the status meter (%s)', (platform: Platform) => {
  const lost = lostRecordsSuite(platform, {
    testNumbers: { numbers: [{ phoneNumber: TEST_NUMBER, code: '246810' }] },
  });
  const { suite } = lost;

  it("an unknown handle polled past the meter's points answers 404 each time; the neighbour's lost record is still rebuilt", async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    await lost.boot(account);
    const gone = await lost.start(TEST_NUMBER);
    const victim = await lost.start(phoneNumber());
    // A deploy: the MemoryStore is new; the test session went with it, the real one is pending upstream.
    await lost.deploy(account);

    const polls: number[] = [];
    for (let i = 0; i < 2 * STATUS_READS_PER_CALLER.points; i++)
      polls.push((await call(suite.host!.url, 'GET', `/verification/status/${gone}`)).status);
    expect(polls).toEqual(Array<number>(polls.length).fill(404));
    const read = await call(suite.host!.url, 'GET', `/verification/status/${victim}`);
    expect({ status: read.status, verification_status: read.body.status }).toEqual({
      status: 200,
      verification_status: 'sent',
    });
  });
});

// The poll is the first to ask the API (no reconciler): what it finds out is what the page is told.
describe.each(PLATFORMS)('a session the API lost (%s)', (platform: Platform) => {
  const lost = lostRecordsSuite(platform, { reconcile: { enabled: false } });
  const { suite } = lost;

  it('a session the API lost answers 404 not_found on the poll that finds it out, not its last known state', async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    await lost.boot(account);
    const id = await lost.start(phoneNumber());
    const status = () => call(suite.host!.url, 'GET', `/verification/status/${id}`);
    expect((await status()).body.status).toBe('sent');
    await suite.sb.advance(5_000);
    suite.sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 404, count: 1 });
    const gone = await status();
    expect(gone.status).toBe(404);
    expect(gone.headers.get('content-type')).toContain('application/problem+json');
    expect(gone.body).toMatchObject({ status: 404, error_code: 'not_found' });
  });
});
