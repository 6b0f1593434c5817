import { describe, expect, it } from '@jest/globals';
import { StatusWatcher } from './status-watcher.js';
import type { StatusView } from './verification.views.js';

const view = (status: StatusView['status'], awaitingCode = false): StatusView => ({
  verificationId: 'vid',
  method: 'sms',
  status,
  phoneNumberMasked: '+7******4567',
  expiresAt: new Date(600_000),
  verifiedAt: status === 'verified' ? new Date(30_000) : null,
  awaitingCode,
  pollIntervalMs: 2000,
  methodsTried: ['sms'],
  switchMethods: [],
});

const watcher = (first: StatusView, closed: StatusWatcher[] = []) =>
  new StatusWatcher(
    {
      journeyId: 'j',
      verificationId: 'vid',
      owner: undefined,
      clientKey: 'k',
      first,
      firstRead: 1,
      openedAt: 0,
    },
    () => 60_000,
    (w) => closed.push(w),
  );

/** What a status stream is shown: its first answer, then each change, whenever the stream asks for it. */
describe('StatusWatcher', () => {
  it('an answer offered while the stream writes the previous one is shown next', async () => {
    const w = watcher(view('sent'));
    expect((await w.next())?.status).toBe('sent');
    // The stream is not waiting (it writes its answer): the change waits for its next read.
    w.offer(view('pending', true));
    expect((await w.next())?.awaitingCode).toBe(true);
    // Two changes before a read: the newer one is shown, the older never.
    w.offer(view('pending', false));
    w.offer(view('verified'));
    expect((await w.next())?.status).toBe('verified');
    // A terminal status ends the stream after its answer.
    expect(await w.next()).toBeUndefined();
  });

  it('a change offered while the stream waits is shown at once; a repeat of what it shows is not', async () => {
    const w = watcher(view('sent'));
    await w.next();
    const next = w.next();
    w.offer(view('sent'));
    w.offer(view('pending', true));
    expect((await next)?.awaitingCode).toBe(true);
  });

  it('close ends a waiting read and is reported once', async () => {
    const closed: StatusWatcher[] = [];
    const w = watcher(view('sent'), closed);
    await w.next();
    const next = w.next();
    w.close();
    w.close();
    expect(await next).toBeUndefined();
    expect(closed).toStrictEqual([w]);
    w.offer(view('verified'));
    expect(await w.next()).toBeUndefined();
  });
});
