/**
 * A test number's start answers only once its coalescing claim holds the played session, as a real start's
 * commit does: on a store whose write is overtaken when the host goes on without it (slowWritesStore), the
 * claim's key names the session when the 201 arrives, so an identical start on any instance is handed it back.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { slowWritesStore } from '../support/round-trip-store.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const CODE = '246810';

describe.each(PLATFORMS)('a test number’s start and its claim’s write (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  const reviewer = platform === 'express' ? '+79990004651' : '+79990004652';

  it('the 201 comes once the claim hands the session back; an identical start then resumes it', async () => {
    const slow = slowWritesStore(
      () => suite.sb.now(),
      // The claim turning into the session: over the claim it holds.
      (method, args) => method === 'replaceIfEquals' && String(args[2]).startsWith('session:'),
      { once: true },
    );
    const account = await suite.sb.createAccount({ balance: 100 });
    try {
      suite.host = await createTestApp({
        platform,
        module: moduleOptions(
          suite.sb,
          {
            store: slow.store,
            // The start goes on to write its history entry: the claim's write, not awaited, would be overtaken.
            history: {},
            limits: { spendCap: false, pumping: false },
            testNumbers: { numbers: [{ phoneNumber: reviewer, code: CODE }] },
          },
          account,
        ),
      });
      const start = () =>
        call(
          suite.host!.url,
          'POST',
          '/verification/start',
          { phone_number: reviewer, method: 'sms' },
          { 'x-user': 'reviewer' },
        );
      const first = await start();
      expect(first.status).toBe(201);
      expect(slow.held()).toBe(1);
      const handedBack = dumpMemoryStore(slow.inner as MemoryStore).filter((line) =>
        / session:\S+$/.test(line),
      );
      expect(handedBack).toHaveLength(1);
      const again = await start();
      expect({ status: again.status, resumed: again.body.resumed, id: again.body.verification_id }).toEqual({
        status: 201,
        resumed: true,
        id: first.body.verification_id,
      });
    } finally {
      slow.land();
      await suite.host?.close();
      suite.host = undefined;
      await slow.inner.close();
    }
  });
});
