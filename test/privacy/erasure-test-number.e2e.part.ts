/**
 * Erasure of a test number (a reviewer's, played by the module): its played session's entries go with its
 * record, as a real session's do; the store keeps nothing of the session but bare marks.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import { call, type TestApp } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const REVIEWER = '+79990000001';

describe('erasure of a test number', () => {
  const suite = sandboxSuite();
  let host: TestApp | undefined;
  let store: MemoryStore | undefined;
  afterEach(async () => {
    await host?.close();
    await store?.close();
  });

  it.each(['phoneNumber', 'owner'] as const)(
    'forget({ %s }): the played session’s entries are gone with its record, its handle 404',
    async (by) => {
      store = new MemoryStore({ clock: () => suite.sb.now() });
      host = await startAccountHost('express', suite.sb, {
        module: { store, testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: '246810' }] } },
      });
      const owner = `reviewer-${by}`;
      const started = await call(
        host.url,
        'POST',
        '/verification/start',
        { phone_number: REVIEWER, method: 'sms' },
        { 'x-user': owner },
      );
      expect(started.status).toBe(201);
      const played = () => dumpMemoryStore(store!).filter((line) => line.includes('test-number:session:'));
      expect(played()).toHaveLength(1);

      const report = await host.app
        .get(VerificationErasure, { strict: false })
        .forget(by === 'owner' ? { owner } : { phoneNumber: REVIEWER });
      expect(report).toMatchObject({ sessions: 1, liveSessions: 1 });
      expect(played()).toEqual([]);
      const status = await call(
        host.url,
        'GET',
        `/verification/status/${String(started.body.verification_id)}`,
        undefined,
        { 'x-user': owner },
      );
      expect(status.status).toBe(404);
    },
  );
});
