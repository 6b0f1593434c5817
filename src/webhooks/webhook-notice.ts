import type { VerificationSession } from '../api/api.types.js';
import type { SessionRecord } from '../core/session-record.js';
import { VerificationEventName } from '../core/verification-events.js';
import { announcedStatus } from '../core/verification-status.js';

/**
 * What the module takes from a webhook body: which session and which event. Everything else
 * in the payload is a claim; the API says what is true.
 */
export interface WebhookNotice {
  requestId: string;
  /** e.g. `verification.verified` (upstream event names). */
  event: string;
  /** The payload's `data` object (or the body itself), read only when `confirmWithApi` is off. */
  data: Record<string, unknown>;
}

const REQUEST_ID = /^[A-Za-z0-9_-]{1,100}$/;
const EVENT = /^[A-Za-z0-9_.-]{1,100}$/;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads `(request_id, event)` from a webhook body. The spec leaves the shape "not shown"; this
 * accepts the Standard Webhooks envelope `{ type, data: { request_id } }` and flat variants
 * (`event` for `type`, a top-level `request_id`). Undefined when either is missing.
 */
export function readWebhookNotice(body: unknown): WebhookNotice | undefined {
  if (!isRecord(body)) return undefined;
  const data = isRecord(body.data) ? body.data : body;
  const requestId = [data.request_id, body.request_id].find(
    (v) => typeof v === 'string' && REQUEST_ID.test(v),
  );
  const event = [body.type, body.event, data.event].find((v) => typeof v === 'string' && EVENT.test(v));
  if (typeof requestId !== 'string' || typeof event !== 'string') return undefined;
  return { requestId, event, data };
}

/**
 * `confirmWithApi: false`: the observation is built from the signed event itself. The session's
 * identity (number, method, owner) still comes from the module's own record, never the payload.
 */
export function observationFromNotice(
  notice: WebhookNotice,
  record: SessionRecord,
  now: number,
): VerificationSession {
  const status = announcedStatus(notice.event);
  const verifiedAt = status === 'verified' ? (parseDate(notice.data.verified_at) ?? new Date(now)) : null;
  return {
    requestId: record.requestId,
    phoneNumber: record.phoneNumber,
    method: record.method,
    status: status ?? record.status,
    verifiedAt,
    expiresAt: new Date(record.expiresAt),
    awaitingCode:
      notice.event === VerificationEventName.codeRequired ? true : status ? false : record.awaitingCode,
  };
}

function parseDate(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
