/**
 * What an erasure answers (ErasureReport): `sessions` every session record it removed, `liveSessions` those
 * still pending, whichever pending status the API last showed (`sent`, or `delivered` once the message
 * reached the phone): their outcomes are dropped, which the host's deletion log says.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

let serial = 0;
const phone = () =>
  `+7916${String(process.pid % 1000).padStart(3, '0')}${String(5000 + ++serial).padStart(4, '0')}`;

describe('what an erasure reports of the sessions it removed', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  const stores: MemoryStore[] = [];
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
    for (const s of stores.splice(0)) await s.close();
  });

  it('counts a pending session as live whether the API shows it sent or delivered; a verified one is not', async () => {
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    stores.push(store);
    const host = await createTestApp({ platform: 'express', module: moduleOptions(suite.sb, { store }) });
    hosts.push(host);
    const owner = `owner-${randomUUID()}`;
    const post = (path: string, body: unknown) =>
      call(host.url, 'POST', `/verification/${path}`, body, { 'x-user': owner });
    const status = (id: string) =>
      call(host.url, 'GET', `/verification/status/${id}`, undefined, { 'x-user': owner });
    const start = async () => {
      const n = phone();
      const res = await post('start', { phone_number: n, method: 'sms' });
      expect(res.status).toBe(201);
      return { id: String(res.body.verification_id), rid: suite.sb.sessionsFor(n).at(-1)!.request_id };
    };

    const sent = await start();
    const delivered = await start();
    await suite.sb.deliver(delivered.rid);
    const verified = await start();
    await suite.sb.deliver(verified.rid);
    const code = String(suite.sb.getSession(verified.rid)!.code);
    expect((await post('check', { verification_id: verified.id, code })).body.verified).toBe(true);
    // What the module knows of each, as their pages see it.
    expect((await status(sent.id)).body.status).toBe('sent');
    expect((await status(delivered.id)).body.status).toBe('delivered');
    expect((await status(verified.id)).body.status).toBe('verified');

    const report = await host.app.get(VerificationErasure, { strict: false }).forget({ owner });
    expect(report).toMatchObject({ sessions: 3, liveSessions: 2 });
    for (const { id } of [sent, delivered, verified]) expect((await status(id)).status).toBe(404);
  });
});
