/**
 * A check the API has already answered `verified` writes the number's history after its answer came back
 * (the right code's entry, the start promoted). An erasure of the number that runs while that write is on
 * its way reads the rings before it lands; the write then finds the subject's erasure mark changed since it
 * began and erases the number's history again: once both have answered, nothing of the number is listed,
 * neither under it nor under its owner. An owner erased meanwhile: its own history goes, and the number's
 * entries stay without it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

/** A store whose first count of a number ring's verified shelf waits until released. */
class GatedStore extends MemoryStore {
  armed = false;
  reached!: Promise<void>;
  release!: () => void;
  #reached!: () => void;
  #gate: Promise<void> = Promise.resolve();
  arm(): void {
    this.armed = true;
    this.reached = new Promise((resolve) => (this.#reached = resolve));
    this.#gate = new Promise<void>((resolve) => (this.release = resolve));
  }
  override async increment(key: string, by: number, ttlMs: number, options?: { evictable?: boolean }) {
    if (this.armed && /history:\{n:[^}]+\}:verified:seq$/.test(key)) {
      this.armed = false;
      this.#reached();
      await this.#gate;
    }
    return super.increment(key, by, ttlMs, options);
  }
}

describe("an erasure while a verified check's history is on its way", () => {
  const suite = sandboxSuite();
  let store: GatedStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it.each(['phoneNumber', 'owner'] as const)(
    'erased by %s: nothing of the subject is listed once the erasure and the check have both answered',
    async (by) => {
      store = new GatedStore({ clock: () => suite.sb.now() });
      suite.host = await createTestApp({
        platform: 'express',
        module: moduleOptions(suite.sb, { history: {}, store }),
      });
      const history = suite.host.app.get(VerificationHistory);
      const owner = `yusuf-${by}`;
      const phone = `+791670${String(process.pid % 100).padStart(2, '0')}${by === 'owner' ? '002' : '001'}`;
      const post = (path: string, body: unknown) =>
        call(suite.host!.url, 'POST', `/verification/${path}`, body, { 'x-user': owner });
      const started = await post('start', { phone_number: phone, method: 'sms' });
      expect(started.status).toBe(201);
      const [session] = suite.sb.sessionsFor(phone);
      await suite.sb.deliver(session!.request_id);
      const code = String(suite.sb.getSession(session!.request_id)!.code);

      store.arm();
      const checking = post('check', { verification_id: started.body.verification_id, code });
      await store.reached;
      await suite.host.app
        .get(VerificationErasure)
        .forget(by === 'owner' ? { owner } : { phoneNumber: phone });
      store.release();
      await checking;

      expect(await history.list({ owner })).toEqual([]);
      const numbers = await history.list({ phoneNumber: phone });
      if (by === 'phoneNumber') expect(numbers).toEqual([]);
      else {
        // The number's entries stay without the erased owner (who verified it is the number's history).
        expect(numbers.map((entry) => entry.kind).sort()).toEqual(['check', 'start']);
        expect(numbers.filter((entry) => entry.owner !== undefined)).toEqual([]);
      }
    },
  );
});
