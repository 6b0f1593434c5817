/**
 * A lost record's rebuild takes its caller's metered read, but a handle the API was found not to know
 * (remembered as unknown after its first rebuild) answers 404 from the store and takes none: a caller
 * polling such handles (a test session lost with its MemoryStore, a session the API forgot) never
 * spends the reads another verification of its address needs to be rebuilt.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { STATUS_READS_PER_CALLER } from '../../src/protection/status-read-meter.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { bootGuardHost, storeFor, type Account } from '../verified-phone/guard-host.js';

const TEST_NUMBER = '+79990004431';
let serial = 0;
const phoneNumber = () =>
  `+7916450${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

describe.each(PLATFORMS)('handles the API does not know and the status meter (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let store: ReturnType<typeof storeFor> | undefined;
  const closeStore = async () => {
    if (store !== undefined && 'close' in store) await (store as VerificationStore).close();
    store = undefined;
  };
  afterEach(closeStore);

  async function host(account: Account, limits?: object) {
    store = storeFor('memory', suite.sb);
    suite.host = await bootGuardHost(platform, suite.sb, account, {
      store,
      ...(limits ? { limits } : {}),
      testNumbers: { numbers: [{ phoneNumber: TEST_NUMBER, code: '246810' }] },
    });
  }

  it("an unknown handle polled past the meter's points answers 404 each time; the neighbour's lost record is still rebuilt", async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    await host(account);
    const start = async (phone: string) => {
      const started = await call(suite.host!.url, 'POST', '/verification/start', {
        phone_number: phone,
        method: 'reverse_flash_call',
      });
      expect(started.status).toBe(201);
      return String(started.body.verification_id);
    };
    const lost = await start(TEST_NUMBER);
    const victim = await start(phoneNumber());
    // A deploy: the MemoryStore is new; the test session went with it, the real one is pending upstream.
    await suite.host!.close();
    await closeStore();
    await host(account, {});

    const polls: number[] = [];
    for (let i = 0; i < 2 * STATUS_READS_PER_CALLER.points; i++)
      polls.push((await call(suite.host!.url, 'GET', `/verification/status/${lost}`)).status);
    expect(polls).toEqual(Array<number>(polls.length).fill(404));
    const read = await call(suite.host!.url, 'GET', `/verification/status/${victim}`);
    expect({ status: read.status, verification_status: read.body.status }).toEqual({
      status: 200,
      verification_status: 'sent',
    });
  });
});
