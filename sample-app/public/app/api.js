/**
 * The sample's own routes (`/demo/...`: mode, events, simulated phone). The verification itself
 * goes through `nestjs-phone-verification/element` (see main.js).
 */

/** A refusal (problem+json) or a network failure, with the `error_code` the page explains in words. */
export class ApiProblem extends Error {
  constructor(status, body, retryAfterSeconds) {
    const code = typeof body.error_code === 'string' ? body.error_code : fallbackCode(status);
    super(typeof body.detail === 'string' ? body.detail : code);
    this.name = 'ApiProblem';
    this.status = status;
    this.code = code;
    this.body = body;
    /** Seconds from the `Retry-After` header, or null. */
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

function fallbackCode(status) {
  if (status === 0) return 'network_error';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'service_unavailable';
  return 'unexpected_error';
}

/** `Retry-After` is seconds or an HTTP date. */
function parseRetryAfter(value) {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

async function request(method, path, body) {
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch {
    throw new ApiProblem(0, {}, null);
  }
  const text = await response.text();
  let parsed = {};
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = {};
  }
  if (!response.ok)
    throw new ApiProblem(response.status, parsed, parseRetryAfter(response.headers.get('retry-after')));
  return parsed;
}

/** The sample's own routes. */
export const demoApi = {
  info: () => request('GET', '/demo/info'),
  account: () => request('GET', '/demo/account'),
  phone: (phoneNumber) => request('GET', `/demo/phone?number=${encodeURIComponent(phoneNumber)}`),
  act: (sessionId, action) =>
    request('POST', `/demo/phone/sessions/${encodeURIComponent(sessionId)}/${encodeURIComponent(action)}`),
  advanceClock: (ms) => request('POST', '/demo/sandbox/clock', { advance_ms: ms }),
};
