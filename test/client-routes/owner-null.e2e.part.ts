/**
 * A host's `owner(req)` that answers `null` for a visitor who is not signed in (as a JavaScript host's
 * `req.user?.id ?? null` does) means no owner, as `undefined` does: two such visitors, from two addresses,
 * starting the same number are two callers, each given a session of its own, never one "null" owner's
 * (the second handed the first's verification, or held by its cooldown).
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { PLATFORMS, type Platform } from '../support/verification-app.js';
import { freshIp, freshPhone, moduleOptions, startFrom } from '../protection/protection-host.js';

describe.each(PLATFORMS)('owner(req) answering null (%s)', (platform: Platform) => {
  const suite = sandboxSuite({ demoAccount: { balance: 100_000 } });

  it('is no owner: two visitors starting one number each get a session of their own', async () => {
    const { sb } = suite;
    const host = await suite.boot({
      platform,
      trustProxy: true,
      module: moduleOptions(
        sb,
        {},
        {
          // No cast: OwnerAnswer takes null, as a host writes it.
          owner: (req: { headers: Record<string, string | undefined> }) => req.headers['x-user'] ?? null,
        },
      ),
    });
    const phone = freshPhone();
    const first = await startFrom(host, freshIp(), phone);
    expect(first.status).toBe(201);
    const second = await startFrom(host, freshIp(), phone);
    expect({ status: second.status, resumed: second.body.resumed }).toEqual({ status: 201, resumed: false });
    expect(second.body.verification_id).not.toBe(first.body.verification_id);
    expect(sb.sessionsFor(phone)).toHaveLength(2);
  });
});
