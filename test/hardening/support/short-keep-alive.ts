import { Agent, fetch as undiciFetch } from 'undici';

/**
 * The soak's HTTP client: fetch over a pool that drops a connection after 1 s idle. The servers it talks to
 * (the sandbox, a Node host) close theirs after 5 s, and the global fetch keeps its own for 4 s: under a
 * loaded CI machine a timer firing a second late sent a request on a connection the server had just closed
 * ("other side closed"). A 4 s margin leaves that race to stalls no test survives anyway.
 */
const agent = new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });

export function soakFetch(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) {
  return undiciFetch(url, { ...init, dispatcher: agent });
}
