import { createHmac, randomBytes } from 'node:crypto';
import http, { type ClientRequest } from 'node:http';
import https from 'node:https';
import type { SandboxAccount } from './sandbox-accounts.js';
import type { SandboxClock } from './sandbox-clock.js';
import type { SandboxFaults } from './sandbox-faults.js';
import type { ResolvedSandboxOptions } from './sandbox.options.js';
import type { SandboxScheduler } from './sandbox-scheduler.js';
import { wireMethod, type SandboxSession } from './sandbox-session.js';

export type WebhookEvent =
  'verification.code_required' | 'verification.verified' | 'verification.failed' | 'verification.expired';

/** One line of the webhook log: a delivery attempt, or a message dropped by a fault. */
export interface WebhookDelivery {
  webhook_id: string;
  event: WebhookEvent;
  request_id: string;
  url: string;
  attempt: number;
  /** HTTP status of the receiver's answer, or what happened instead. */
  status: number | 'error' | 'timeout' | 'dropped';
  /** Sandbox-clock time of the attempt (ISO). */
  at: string;
}

interface WebhookMessage {
  id: string;
  event: WebhookEvent;
  requestId: string;
  url: string;
  secret: string;
  body: string;
  copies: number;
}

/** Keeps the log bounded in a long-running CLI sandbox. */
const MAX_LOG = 100_000;

/**
 * Signed webhook delivery (Standard Webhooks): fire-and-forget POSTs with a per-attempt real-time
 * time-out, retried on non-2xx/error/time-out with exponential backoff on the sandbox clock, the same
 * `webhook-id` on every attempt and copy. `webhook-timestamp` is the sandbox clock at the attempt.
 */
export class SandboxWebhooks {
  private readonly log: WebhookDelivery[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly requests = new Set<ClientRequest>();
  private held: WebhookMessage[] = [];
  private closed = false;

  constructor(
    private readonly options: ResolvedSandboxOptions,
    private readonly clock: SandboxClock,
    private readonly scheduler: SandboxScheduler,
    private readonly faults: SandboxFaults,
  ) {}

  /** Emits `event` for `session` to the account's webhook URL, if it has one. */
  emit(account: SandboxAccount, event: WebhookEvent, session: SandboxSession): void {
    if (!account.webhookUrl || this.closed) return;
    const now = this.clock.now();
    const payload = {
      type: event,
      timestamp: new Date(now).toISOString(),
      data: {
        request_id: session.requestId,
        phone_number: session.phoneNumber,
        method: wireMethod(session.method),
        status: session.status,
        awaiting_code: session.awaitingCode,
        verified_at: session.verifiedAt === null ? null : new Date(session.verifiedAt).toISOString(),
        expires_at: new Date(session.expiresAt).toISOString(),
      },
    };
    const plan = this.faults.planWebhook();
    const message: WebhookMessage = {
      id: `msg_${randomBytes(16).toString('hex')}`,
      event,
      requestId: session.requestId,
      url: account.webhookUrl,
      secret: account.webhookSecret,
      body: JSON.stringify(payload),
      copies: plan.copies,
    };
    if (plan.drop) {
      this.record(message, 1, 'dropped');
      this.options.log(`webhook ${message.id} ${event} for ${session.requestId} dropped by a fault`);
      return;
    }
    if (plan.reorder) {
      if (this.held.length === 0) this.scheduler.at(now + plan.reorderWindowMs, () => this.releaseHeld());
      this.held.push(message);
    } else if (plan.delayMs > 0) {
      this.scheduler.at(now + plan.delayMs, () => this.start(message));
    } else {
      this.start(message);
    }
  }

  /** Every delivery attempt so far, oldest first. */
  deliveries(): WebhookDelivery[] {
    return this.log.map((d) => ({ ...d }));
  }

  /** Resolves once no delivery attempt is in flight (attempts due later on the clock do not count). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  close(): void {
    this.closed = true;
    this.held = [];
    for (const req of this.requests) req.destroy();
    this.requests.clear();
  }

  /** Sends every copy of a message concurrently; resolves when their first attempts have finished. */
  private start(message: WebhookMessage): Promise<void> {
    const copies: Promise<void>[] = [];
    for (let i = 0; i < message.copies; i++) copies.push(this.attempt(message, 1));
    return Promise.all(copies).then(() => undefined);
  }

  /** Held (reordered) messages go out newest first, one after another, so the receiver sees that order. */
  private releaseHeld(): void {
    const batch = this.held.reverse();
    this.held = [];
    this.track(
      (async () => {
        for (const message of batch) await this.start(message);
      })(),
    );
  }

  private attempt(message: WebhookMessage, attempt: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    const delivery = this.send(message).then((status) => {
      this.record(message, attempt, status);
      const ok = typeof status === 'number' && status >= 200 && status < 300;
      if (ok || this.closed) return;
      if (attempt >= this.options.webhookMaxAttempts) {
        this.options.log(`webhook ${message.id} ${message.event} gave up after ${attempt} attempts`);
        return;
      }
      const backoff = this.options.webhookRetryBaseMs * this.options.webhookRetryFactor ** (attempt - 1);
      this.scheduler.at(this.clock.now() + backoff, () => void this.attempt(message, attempt + 1));
    });
    return this.track(delivery);
  }

  private track(promise: Promise<void>): Promise<void> {
    this.inFlight.add(promise);
    return promise.finally(() => this.inFlight.delete(promise));
  }

  private send(message: WebhookMessage): Promise<WebhookDelivery['status']> {
    return new Promise((resolve) => {
      const timestamp = Math.floor(this.clock.now() / 1000);
      const signature = sign(message.secret, message.id, timestamp, message.body);
      let url: URL;
      try {
        url = new URL(message.url);
      } catch {
        resolve('error');
        return;
      }
      const transport = url.protocol === 'https:' ? https : http;
      let settled = false;
      const finish = (status: WebhookDelivery['status']): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.requests.delete(req);
        resolve(status);
      };
      const req = transport.request(
        url,
        {
          method: 'POST',
          agent: false,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(message.body),
            'user-agent': 'phone-verification-sandbox',
            'webhook-id': message.id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signature,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => finish(res.statusCode ?? 'error'));
          res.on('error', () => finish('error'));
        },
      );
      const timer = setTimeout(() => {
        finish('timeout');
        req.destroy();
      }, this.options.webhookTimeoutMs);
      this.requests.add(req);
      req.on('error', () => finish('error'));
      req.end(message.body);
    });
  }

  private record(message: WebhookMessage, attempt: number, status: WebhookDelivery['status']): void {
    this.log.push({
      webhook_id: message.id,
      event: message.event,
      request_id: message.requestId,
      url: message.url,
      attempt,
      status,
      at: new Date(this.clock.now()).toISOString(),
    });
    if (this.log.length > MAX_LOG) this.log.splice(0, this.log.length - MAX_LOG);
  }
}

/** Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 over `id.timestamp.body` with the secret's bytes. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
