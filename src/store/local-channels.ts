import type { StoreMessageListener } from './verification-store.interface.js';

/**
 * Publish/subscribe inside one process: MemoryStore's, and what the status streams fall back to
 * when a host's own store has none. Delivery is asynchronous (after the publisher's current step,
 * as with Redis), and a listener that throws never keeps the message from the others.
 */
export class LocalChannels {
  private readonly listeners = new Map<string, Set<StoreMessageListener>>();

  publish(channel: string, message: string): void {
    const listeners = this.listeners.get(channel);
    if (!listeners) return;
    for (const listener of [...listeners])
      queueMicrotask(() => {
        if (!listeners.has(listener)) return;
        try {
          listener(message);
        } catch {
          // A subscriber's own failure is its business; the other subscribers still get the message.
        }
      });
  }

  subscribe(channel: string, listener: StoreMessageListener): () => void {
    let listeners = this.listeners.get(channel);
    if (!listeners) this.listeners.set(channel, (listeners = new Set()));
    // A wrapper per call, so the same function subscribed twice is removed once per unsubscribe.
    const entry: StoreMessageListener = (message) => listener(message);
    listeners.add(entry);
    return () => {
      listeners.delete(entry);
      if (listeners.size === 0 && this.listeners.get(channel) === listeners) this.listeners.delete(channel);
    };
  }

  /** Drops every listener, those a message already queued would reach included. */
  clear(): void {
    for (const listeners of this.listeners.values()) listeners.clear();
    this.listeners.clear();
  }
}
