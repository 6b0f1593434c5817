import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { describeUpstreamError } from '../api/verification-api.error.js';
import { CLIENT_ERROR_STATUSES, VerificationClientError } from '../core/verification.errors.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions, WebhookVerifier } from '../options/verification.options.js';
import { VerificationListenerError } from '../sessions/verification.tracker.js';
import { VerificationStoreUnavailableError } from '../store/store-unavailable.error.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { releaseClaim, takeClaim } from '../store/store-claim.js';
import { StandardWebhooksVerifier, type WebhookHeaders } from './standard-webhooks.verifier.js';
import { readWebhookNotice, type WebhookNotice } from './webhook-notice.js';
import { WebhookNotices, type WebhookResult } from './webhook-notices.js';
import { createWebhookVerifier } from './webhook-verifier.js';

export type { WebhookResult } from './webhook-notices.js';

/** How long a delivery holds its webhook-id while being processed (a crashed one frees it after this). */
const PROCESSING_LEASE_MS = 30_000;
/** `application/json` and the structured `+json` types (`application/cloudevents+json`). */
const JSON_MEDIA_TYPE = /^application\/([a-z0-9.-]+\+)?json$/;
const RAW_BODY_MISSING =
  'VerificationModule: the webhook route needs the raw request body to check signatures, and this app ' +
  'was created without it. Create the app with `NestFactory.create(AppModule, { rawBody: true })` ' +
  '(Express and Fastify alike). Until then every webhook is answered 503, so the sender keeps retrying ' +
  'and no event is lost.';

/**
 * Handles one webhook delivery: signature over the raw bytes, `(request_id, event)` from the body and
 * de-duplication by `webhook-id`, then hands the notice to its WebhookNotices, a plain object it
 * makes (what the notice means for the session: confirmation with `GET /v1/verify/{id}`, the tracker). Refusals are VerificationClientErrors
 * (problem+json): 401 `invalid_signature` before anything else happens; 503 when it could not be
 * processed (API, store or a listener failed), so the sender retries; nothing is marked done that was
 * not done. Every outcome is counted, logged and traced here, once.
 */
@Injectable()
export class WebhookReceiver {
  private rawBodyMissingReported = false;
  /** The host's `webhooks.verifier`, else Standard Webhooks; null when off or unsigned (`signature: 'none'`). */
  private readonly verifier: WebhookVerifier | null;
  /** What a delivered notice means for its session (step 5). */

  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly notices: WebhookNotices,
    private readonly telemetry: VerificationTelemetry,
  ) {
    this.verifier = createWebhookVerifier(options, telemetry.logger);
  }

  /**
   * Handles one delivery; every outcome (also a refusal) is counted and logged once. `bodyRead`:
   * whether a body parser of the host read the body (false: no parser takes its content type).
   */
  async receive(rawBody: unknown, headers: WebhookHeaders, bodyRead = true): Promise<WebhookResult> {
    // The span is active while the events are emitted: the host's listeners run in the webhook's trace.
    return this.telemetry.span('webhook', async (span) => {
      const result = await this.receiveCounted(rawBody, headers, bodyRead);
      span.set({ outcome: result });
      return result;
    });
  }

  private async receiveCounted(
    rawBody: unknown,
    headers: WebhookHeaders,
    bodyRead: boolean,
  ): Promise<WebhookResult> {
    const startedAt = Date.now();
    const webhookId = firstHeader(headers['webhook-id']);
    try {
      const result = await this.receiveChecked(rawBody, headers, bodyRead);
      this.telemetry.webhookHandled(result, { webhookId, status: 200, latencyMs: Date.now() - startedAt });
      return result;
    } catch (error) {
      const refusal = error instanceof VerificationClientError ? error : undefined;
      this.telemetry.webhookHandled(
        refusal?.errorCode === 'invalid_signature' ? 'invalid_signature' : 'failed',
        {
          webhookId,
          // What `failure` turns any other error into.
          status: refusal?.getStatus() ?? CLIENT_ERROR_STATUSES.service_unavailable,
          latencyMs: Date.now() - startedAt,
        },
      );
      throw this.failure(error);
    }
  }

  private async receiveChecked(
    rawBody: unknown,
    headers: WebhookHeaders,
    bodyRead: boolean,
  ): Promise<WebhookResult> {
    // The route is declared but the options switched webhooks off: no verifier exists, nothing is believed.
    if (!this.options.webhooks.enabled)
      throw new VerificationClientError('not_found', 'Webhooks are switched off here');
    const body = this.rawBody(rawBody, headers, bodyRead);
    await this.authenticate(body, headers);
    const notice = parseNotice(body);

    const dedupeKey = webhookIdKey(headers);
    const claim = dedupeKey && (await takeClaim(this.store, dedupeKey, PROCESSING_LEASE_MS, 'processing:'));
    if (claim === null) return 'duplicate';
    let result: WebhookResult;
    try {
      result = await this.notices.handle(notice);
    } catch (error) {
      // Not the retry's, which took the id once this delivery outlived the lease.
      if (claim) await releaseClaim(this.store, claim).catch(() => this.leaseKept());
      throw this.failure(error);
    }
    if (dedupeKey) await this.store.set(dedupeKey, 'done', this.doneTtlMs());
    return result;
  }

  /**
   * The raw bytes. A content type that is not JSON, or one the host's parsers do not read (Express
   * leaves `application/merge-patch+json` unread), is a 415 the sender will not retry; only a body
   * that was read without its raw bytes kept means the app lacks `rawBody: true`: a loud 503.
   */
  private rawBody(rawBody: unknown, headers: WebhookHeaders, bodyRead: boolean): Buffer {
    const mediaType = String(headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    if (!JSON_MEDIA_TYPE.test(mediaType))
      throw unsupportedMediaType('A webhook body must be application/json');
    if (Buffer.isBuffer(rawBody)) return rawBody;
    if (!hasBody(headers)) return Buffer.alloc(0);
    if (!bodyRead)
      throw unsupportedMediaType(
        `This app does not read ${mediaType.slice(0, 80)} bodies; send application/json`,
      );
    if (!this.rawBodyMissingReported) {
      this.rawBodyMissingReported = true;
      this.telemetry.logger.error(RAW_BODY_MISSING);
    } else {
      this.telemetry.logger.warn(
        'webhook answered 503: raw body unavailable (create the app with { rawBody: true })',
      );
    }
    throw new VerificationClientError(
      'service_unavailable',
      'The webhook receiver is misconfigured (raw request body unavailable); retry later',
      {},
      60,
    );
  }

  private async authenticate(body: Buffer, headers: WebhookHeaders): Promise<void> {
    if (this.verifier === null) return; // signature: 'none', warned about at boot
    const reason =
      this.verifier instanceof StandardWebhooksVerifier
        ? this.verifier.check(body, headers)
        : await hostVerdict(this.verifier, body, headers);
    if (reason === undefined) return;
    this.telemetry.logger.warn(`webhook refused: invalid signature (${reason})`);
    throw new VerificationClientError(
      'invalid_signature',
      'The webhook signature is missing, wrong or stale',
    );
  }

  private failure(error: unknown): VerificationClientError {
    if (error instanceof VerificationClientError) return error;
    if (error instanceof VerificationListenerError)
      this.telemetry.logger.warn(
        `webhook answered 503: a listener of ${error.event} failed; the sender will retry`,
      );
    else if (error instanceof VerificationStoreUnavailableError)
      this.telemetry.logger.error(`webhook answered 503: store unavailable (${error.message})`);
    else this.telemetry.logger.warn(`webhook answered 503: ${describeUpstreamError(error)}`);
    return new VerificationClientError(
      'service_unavailable',
      'The webhook could not be processed now; retry later',
      {},
      5,
    );
  }

  /**
   * A failed delivery whose webhook-id the store would not give back: the sender's retries within
   * PROCESSING_LEASE_MS are answered `duplicate`, and the reconciler's polls are what emit its event.
   */
  private leaseKept(): void {
    this.telemetry.logger.warn(
      `webhook: its webhook-id could not be released (store); copies within ${PROCESSING_LEASE_MS / 1000} s ` +
        'are answered duplicate, the reconciler follows the session',
    );
  }

  /** A handled webhook-id is remembered for as long as a replay could still pass the timestamp check. */
  private doneTtlMs(): number {
    return Math.max(2 * this.options.webhooks.toleranceSeconds, 3600) * 1000;
  }
}

/** A host verifier's answer; one that throws refuses (its error is not logged: it may quote a secret). */
async function hostVerdict(
  verifier: WebhookVerifier,
  body: Buffer,
  headers: WebhookHeaders,
): Promise<string | undefined> {
  try {
    return (await verifier.verify(body, headers)) === true ? undefined : 'refused by the verifier';
  } catch {
    return 'the verifier threw';
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function parseNotice(body: Buffer): WebhookNotice {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new VerificationClientError('validation_error', 'The webhook body is not JSON', {
      errors: [{ field: null, message: 'body must be JSON' }],
    });
  }
  const notice = readWebhookNotice(parsed);
  if (!notice)
    throw new VerificationClientError('validation_error', 'The webhook names no request_id or event', {
      errors: [{ field: 'data.request_id', message: 'request_id and type are required' }],
    });
  return notice;
}

/** Store key of a delivery's `webhook-id` (hashed: the id is the sender's, of any length). */
function webhookIdKey(headers: WebhookHeaders): string | undefined {
  const value = headers['webhook-id'];
  const id = Array.isArray(value) ? value[0] : value;
  if (typeof id !== 'string' || id === '') return undefined;
  return `webhook:${createHash('sha256').update(id).digest('base64url').slice(0, 32)}`;
}

function unsupportedMediaType(detail: string): VerificationClientError {
  return new VerificationClientError('unsupported_media_type', detail, {
    errors: [{ field: null, message: 'content-type must be application/json' }],
  });
}

/** Whether the request carries a body at all (RFC 9112: a length above zero or a transfer coding). */
function hasBody(headers: WebhookHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = Number(firstHeader(headers['content-length']) ?? 0);
  return Number.isFinite(length) && length > 0;
}
