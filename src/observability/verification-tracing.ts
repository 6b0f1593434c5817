import { ProtectionRefusal, ProtectionRefusalReason, refusalReason } from '../core/refusal-reason.js';
import { methodTraits, VERIFICATION_METHODS } from '../core/verification-method.js';
import { VerificationClientError } from '../core/verification.errors.js';

/** The operations that get a span (`verification.<name>`). */
export type TracedOperation =
  'start' | 'check' | 'switch' | 'cancel' | 'status_refresh' | 'webhook' | 'reconcile';

/** What a span may say. Never a phone number, a code, an id or a cost figure. */
export interface SpanFacts {
  /** The verification method. */
  method?: string;
  /** How it ended: a session status (`sent`, `verified`, …), a webhook result, `refused`, `error`. */
  outcome?: string;
  /** A refusal's reason (protection's, or the error code). */
  refusalReason?: string;
  /** A reviewer or demo number's session (`testNumbers`): `verification.test` is set, `true`. */
  test?: boolean;
  /** What the verification is for (`purpose` on start): `verification.purpose`. */
  purpose?: string;
  /** The host's `assessStart` answer and reason: `verification.assessment`, `verification.assessment_reason`. */
  assessment?: { decision: string; reason?: string };
}

/** What a traced operation may tell its span while it runs. */
export interface TraceSpan {
  set(facts: SpanFacts): void;
}

/** The parts of `@opentelemetry/api` used here (a structural type: the package is an optional peer). */
interface OtelSpan {
  setAttribute(key: string, value: string | boolean): unknown;
  setStatus(status: { code: number }): unknown;
  end(): void;
}
interface OtelApi {
  trace: {
    getTracer(
      name: string,
      version?: string,
    ): {
      startActiveSpan<T>(name: string, options: { kind?: number }, fn: (span: OtelSpan) => T): T;
    };
  };
  SpanStatusCode: { OK: number; ERROR: number };
  SpanKind: { INTERNAL: number; SERVER: number; CONSUMER: number };
}

const NOTHING_TRACED: TraceSpan = { set: () => undefined };
const TRACER_NAME = 'nestjs-phone-verification';

/**
 * OpenTelemetry spans of the module's operations, when `@opentelemetry/api` (an optional peer) is
 * installed: loaded with a dynamic import() once at boot, so a host without it pays one failed
 * import and then a direct call per operation. Without an SDK the API's own tracer is a no-op.
 *
 * Each span is the active one while its operation runs, so what the operation calls (the API
 * client's HTTP instrumentation, the host's event listeners) is its child: a webhook's listeners run
 * in the webhook's trace. Attributes: `verification.method`, `verification.outcome`,
 * `verification.refusal_reason`, `verification.cost_class` (when the API charges the method:
 * `on_verified`, `on_delivery`, `on_initiation`), `verification.test` (true: a test number's session).
 * Never a phone number, a code or an id.
 *
 * Owned by VerificationTelemetry (its `span`), which loads it at boot.
 */
export class VerificationTracing {
  #api: OtelApi | null = null;

  async load(): Promise<void> {
    this.#api = await loadOpenTelemetry();
  }

  /** Runs `operation` in its span (the active one), recording how it ended; rethrows what it throws. */
  async span<T>(
    name: TracedOperation,
    operation: (span: TraceSpan) => Promise<T>,
    facts: SpanFacts = {},
  ): Promise<T> {
    const api = this.#api;
    if (api === null) return operation(NOTHING_TRACED);
    const tracer = api.trace.getTracer(TRACER_NAME);
    const kind = name === 'webhook' ? api.SpanKind.CONSUMER : api.SpanKind.INTERNAL;
    return tracer.startActiveSpan(`verification.${name}`, { kind }, async (span) => {
      const handle: TraceSpan = { set: (more) => setFacts(span, more) };
      handle.set(facts);
      try {
        const result = await operation(handle);
        span.setStatus({ code: api.SpanStatusCode.OK });
        return result;
      } catch (error) {
        const refusal = isRefusal(error);
        handle.set({
          outcome: refusal ? 'refused' : 'error',
          refusalReason:
            refusalReason(error) ?? (error instanceof VerificationClientError ? error.errorCode : undefined),
        });
        // A refusal is the operation working; a failure is an error of the span. No message: it may name a number.
        if (!refusal) span.setStatus({ code: api.SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    });
  }
}

/** A host hook that threw (`beforeStart`, `assessStart`): the start fails closed, a failure of the span. */
const HOOK_FAILURES: ReadonlySet<string> = new Set([
  ProtectionRefusalReason.beforeStartFailed,
  ProtectionRefusalReason.assessStartFailed,
]);

/**
 * Protection refusing (the spend cap's 503 included) is the operation doing its job; a 503 of anything else
 * (the API or the store unreachable) and a failing host hook are failures.
 */
function isRefusal(error: unknown): boolean {
  if (error instanceof ProtectionRefusal) return !HOOK_FAILURES.has(error.reason);
  return error instanceof VerificationClientError && error.errorCode !== 'service_unavailable';
}

function setFacts(span: OtelSpan, facts: SpanFacts): void {
  if (facts.method !== undefined) {
    span.setAttribute('verification.method', facts.method);
    if ((VERIFICATION_METHODS as readonly string[]).includes(facts.method))
      span.setAttribute('verification.cost_class', methodTraits(facts.method).billing);
  }
  if (facts.outcome !== undefined) span.setAttribute('verification.outcome', facts.outcome);
  if (facts.purpose !== undefined) span.setAttribute('verification.purpose', facts.purpose);
  if (facts.assessment !== undefined) {
    span.setAttribute('verification.assessment', facts.assessment.decision);
    if (facts.assessment.reason !== undefined)
      span.setAttribute('verification.assessment_reason', facts.assessment.reason);
  }
  if (facts.refusalReason !== undefined)
    span.setAttribute('verification.refusal_reason', facts.refusalReason);
  if (facts.test === true) span.setAttribute('verification.test', true);
}

async function loadOpenTelemetry(): Promise<OtelApi | null> {
  try {
    const loaded = (await import('@opentelemetry/api')) as unknown as OtelApi & { default?: OtelApi };
    const api = typeof loaded.trace?.getTracer === 'function' ? loaded : loaded.default;
    return api && typeof api.trace?.getTracer === 'function' ? api : null;
  } catch {
    return null;
  }
}
