import { describe, expect, it } from '@jest/globals';
import { LocalChannels } from './local-channels.js';
import { MemoryStore } from './memory.store.js';

describe('LocalChannels', () => {
  it('a message reaches the listeners subscribed when it is delivered: one unsubscribed meanwhile hears nothing', async () => {
    const channels = new LocalChannels();
    const heard: string[] = [];
    const stop = channels.subscribe('c', (m) => void heard.push(`a:${m}`));
    channels.subscribe('c', (m) => void heard.push(`b:${m}`));
    channels.publish('c', 'one');
    // Delivery is after the publisher's step: a stream closed in that step is not written to.
    stop();
    await Promise.resolve();
    expect(heard).toStrictEqual(['b:one']);
  });

  it('a message to a channel nobody listens to, or no longer, is dropped without an error', async () => {
    const store = new MemoryStore();
    await expect(store.publish('nobody', 'x')).resolves.toBeUndefined();
    const stop = await store.subscribe('left', () => undefined);
    stop();
    await expect(store.publish('left', 'x')).resolves.toBeUndefined();
    await store.close();
  });

  it('the same function subscribed twice hears each message twice, and once after one unsubscribe', async () => {
    const channels = new LocalChannels();
    const heard: string[] = [];
    const listener = (m: string) => void heard.push(m);
    const first = channels.subscribe('c', listener);
    channels.subscribe('c', listener);
    channels.publish('c', 'x');
    await Promise.resolve();
    first();
    channels.publish('c', 'y');
    await Promise.resolve();
    expect(heard).toStrictEqual(['x', 'x', 'y']);
  });

  it("a listener that throws keeps the message from no other listener; another channel's hears nothing", async () => {
    const channels = new LocalChannels();
    const heard: string[] = [];
    channels.subscribe('c', () => {
      throw new Error('listener failed');
    });
    channels.subscribe('c', (m) => void heard.push(m));
    channels.subscribe('d', (m) => void heard.push(`d:${m}`));
    channels.publish('c', 'z');
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard).toStrictEqual(['z']);
  });

  it('a message published in the step that closes a MemoryStore reaches no listener: nothing is heard once close() was called', async () => {
    const store = new MemoryStore();
    const heard: string[] = [];
    await store.subscribe('c', (m) => void heard.push(m));
    const published = store.publish('c', 'late');
    const closed = store.close();
    await Promise.all([published, closed]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard).toStrictEqual([]);
  });
});
