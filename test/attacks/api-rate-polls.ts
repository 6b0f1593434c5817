/**
 * The shape the API-rate attacks share: an account limited to 8 requests a second; an attacker starts 24
 * reverse flash calls nobody places (4 a second, under the API's rate: free for the host) and reads each of
 * them at every poll interval (1.5 s for the reverse call), 5 rounds; after each round's polls two real
 * users start. The attackers differ only in who they say they are.
 */
import { expect } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, type TestApp } from '../support/verification-app.js';
import { freshIp, freshPhone, startFrom } from '../protection/protection-host.js';
import { sandboxSuite, type SandboxSuite } from '../support/sandbox-suite.js';

/**
 * The describe block's sandbox for these attacks: its clock stands still but when a test moves it, so a
 * round's polls and the real users' starts after them fall in one second of the API's rate, the attack's
 * worst case (on a running clock a round may straddle two seconds, or an upstream 429's retry push the
 * starts into the next one).
 */
export function pollingFixture(): SandboxSuite {
  return sandboxSuite({ demoAccount: { balance: 100_000 } });
}

/** One attacking caller: its address and the headers that say who it is (an owner, a guest cookie). */
export interface PollingCaller {
  ip: string;
  headers?: Record<string, string>;
}

/** The statuses of the real users' starts beside the polls; the i-th session is `caller(i)`'s. */
export async function realStartsBesidePolls(
  sb: VerificationSandbox,
  host: TestApp,
  caller: (i: number) => PollingCaller,
): Promise<number[]> {
  await sb.updateAccount(sb.demoAccount.apiKey, { rateLimitPerSecond: 8 });
  try {
    const sessions: { id: unknown; by: PollingCaller }[] = [];
    for (let i = 0; i < 24; i++) {
      const by = caller(i);
      const r = await startFrom(host, by.ip, freshPhone(), 'reverse_flash_call', by.headers);
      expect(r.status).toBe(201);
      sessions.push({ id: r.body.verification_id, by });
      if (i % 4 === 3) await sb.advance(1_000);
    }
    const users: number[] = [];
    for (let round = 0; round < 5; round++) {
      await sb.advance(1_500);
      await Promise.all(
        sessions.map(({ id, by }) =>
          call(host.url, 'GET', `/verification/status/${String(id)}`, undefined, {
            'x-forwarded-for': by.ip,
            ...by.headers,
          }),
        ),
      );
      const real = await Promise.all(
        Array.from({ length: 2 }, () => startFrom(host, freshIp(), freshPhone())),
      );
      users.push(...real.map((r) => r.status));
    }
    return users;
  } finally {
    await sb.updateAccount(sb.demoAccount.apiKey, { rateLimitPerSecond: null });
  }
}
