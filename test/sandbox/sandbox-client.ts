/** Plain-fetch helpers for the sandbox tests: real HTTP, nothing mocked. */
import type { VerificationSandbox } from '../../src/testing/index.js';

/** Parsed JSON of arbitrary shape: the tests assert on it field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read JSON of many shapes
export type Json = any;

export interface Creds {
  apiKey: string;
  apiSecret: string;
}

export interface Reply {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  body: Json;
  text: string;
}

export function basic(creds: Creds): string {
  return `Basic ${Buffer.from(`${creds.apiKey}:${creds.apiSecret}`).toString('base64')}`;
}

async function toReply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: unknown;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** An authenticated API call (Basic with `creds`, or the given raw Authorization header, or none with null). */
export async function api(
  sb: VerificationSandbox,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; creds?: Creds; authorization?: string | null } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  const auth =
    options.authorization === undefined ? basic(options.creds ?? sb.demoAccount) : options.authorization;
  if (auth !== null) headers.authorization = auth;
  let payload: string | undefined = options.raw;
  if (options.body !== undefined) payload = JSON.stringify(options.body);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return toReply(await fetch(`${sb.url}${path}`, { method, headers, body: payload }));
}

/** A control API call (no auth). */
export async function control(
  sb: VerificationSandbox,
  method: string,
  path: string,
  body?: unknown,
): Promise<Reply> {
  const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  return toReply(
    await fetch(`${sb.url}/_sandbox${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

/** Starts a verification and returns the 201 body, failing loudly otherwise. */
export async function initiate(
  sb: VerificationSandbox,
  phone: string,
  method: string,
  creds?: Creds,
  extra: Record<string, unknown> = {},
): Promise<Json> {
  const res = await api(sb, 'POST', '/v1/verify', { body: { phone_number: phone, method, ...extra }, creds });
  if (res.status !== 201) throw new Error(`initiate ${method} answered ${res.status}: ${res.text}`);
  return res.body;
}

export async function balanceOf(sb: VerificationSandbox, creds?: Creds): Promise<number> {
  const res = await api(sb, 'GET', '/v1/balance', { creds });
  return res.body.balance.amount as number;
}
