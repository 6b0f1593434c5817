/**
 * The sandbox in its own process: the upstream of every benchmark. Forked by the runner with the
 * sandbox options as its argument; answers commands for accounts, counts, faults and its clock.
 */
import { VerificationSandbox, type SandboxFaultInput, type SandboxOptions } from '../../src/testing/index.js';
import { forkArgument, serveCommands, settledHeapUsed } from '../lib/child-process.js';

export interface SandboxReady {
  url: string;
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
}

const sb = await VerificationSandbox.start({ port: 0, ...forkArgument<SandboxOptions | null>() });

serveCommands(
  {
    url: sb.url,
    apiKey: sb.demoAccount.apiKey,
    apiSecret: sb.demoAccount.apiSecret,
    webhookSecret: sb.demoAccount.webhookSecret,
  } satisfies SandboxReady,
  {
    updateDemoAccount: (patch) =>
      sb.updateAccount(sb.demoAccount.apiKey, patch as Parameters<VerificationSandbox['updateAccount']>[1]),
    account: () => sb.getAccount(sb.demoAccount.apiKey),
    requestCount: (route) => sb.requestCount(route as string | undefined),
    resetRequestCounts: () => sb.resetRequestCounts(),
    addFault: (fault) => sb.addFault(fault as SandboxFaultInput),
    clearFaults: () => sb.clearFaults(),
    now: () => sb.now(),
    advance: async (ms) => {
      await sb.advance(ms as number);
      return sb.now();
    },
    /** Reverse-flash-calls each session from its own number: they become verified (and charged). */
    verifyByCall: async (requestIds) => {
      for (const id of requestIds as string[]) {
        const session = sb.getSession(id);
        if (session) await sb.call(id, session.phone_number);
      }
    },
    /**
     * Verifies each phone's newest reverse_flash_call session by a call from that phone and
     * answers the sessions as a webhook's `data` would carry them.
     */
    verifyPhones: async (phones) => {
      const sessions = [];
      for (const phone of phones as string[]) {
        const found = sb.sessionsFor(phone)[0];
        if (!found) continue;
        await sb.call(found.request_id, phone);
        const s = sb.getSession(found.request_id)!;
        sessions.push({
          request_id: s.request_id,
          phone_number: s.phone_number,
          method: s.method,
          status: s.status,
          awaiting_code: s.awaiting_code,
          verified_at: s.verified_at,
          expires_at: s.expires_at,
        });
      }
      return sessions;
    },
    /** The code or call goes out for each phone's newest session; answers phone → code. */
    deliverCodes: async (phones) => {
      const codes: Record<string, string> = {};
      for (const phone of phones as string[]) {
        const session = sb.sessionsFor(phone)[0];
        if (!session) continue;
        await sb.deliver(session.request_id);
        const code = sb.getSession(session.request_id)?.code;
        if (typeof code === 'string') codes[phone] = code;
      }
      return codes;
    },
    heapUsed: () => settledHeapUsed(),
  },
  () => sb.close(),
);
