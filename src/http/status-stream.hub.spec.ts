import { describe, expect, it } from '@jest/globals';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { StatusWatch } from '../verification/status-watch.js';
import { StatusStreamHub } from './status-stream.hub.js';

describe('StatusStreamHub', () => {
  it('a response it cannot take (the platform throws as it is hijacked) fails the route and gives the watcher back', async () => {
    // A watcher holds one of the caller's stream slots (StatusWatch's caps): kept, each such failure would
    // take one for good, until the caller's streams were all refused.
    const closed: string[] = [];
    const watch = {
      open: async ({ verificationId }: { verificationId: string }) => ({
        close: () => void closed.push(verificationId),
      }),
    } as unknown as StatusWatch;
    const hub = new StatusStreamHub({} as ResolvedVerificationOptions, watch);
    const refused = new Error('reply already sent');
    const response = {
      raw: {},
      hijack: () => {
        throw refused;
      },
    };
    await expect(hub.open('v-1', 'owner', { headers: {} }, response)).rejects.toBe(refused);
    expect({ closed, open: hub.size }).toEqual({ closed: ['v-1'], open: 0 });
  });
});
