import { expect } from '@jest/globals';
import { ClientErrorCode } from '../../../src/core/verification.errors.js';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

const CODES: string[] = Object.values(ClientErrorCode);

export function isProblem(res: Answer): boolean {
  return /^application\/problem\+json/.test(res.headers.get('content-type') ?? '');
}

/** A refusal by one of the module's routes: a 4xx problem document with a known `error_code`. */
export function expectProblem4xx(res: Answer): Record<string, unknown> {
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(res.text) as Record<string, unknown>;
  expect(CODES).toContain(body.error_code);
  expect(typeof body.title).toBe('string');
  return body;
}

/** Sends raw text (any JSON, or not JSON at all) and reads the answer as text. */
export async function send(
  url: string,
  method: 'GET' | 'POST',
  body?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
