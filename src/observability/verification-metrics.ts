import type { ApiRequestInfo } from '../api/api-client.options.js';
import type { Money } from '../api/api.types.js';
import { isUnknownSession } from '../api/verification-api.error.js';
import {
  VERIFICATION_DEFAULTS,
  VerificationOptionsError,
  type MetricsOptions,
} from '../options/verification.options.js';
import type { RefusalReason } from '../core/refusal-reason.js';
import { TIME_TO_VERIFY_BUCKETS_MS } from '../core/duration-histogram.js';
import { isModuleNotFound } from '../core/module-not-found.js';

/*
 * prom-client is an optional peer dependency: it is loaded with a dynamic import() only when
 * `metrics.enabled` is true, so these few structural types stand in for its own (the package's
 * type declarations must not reference it either).
 */
type Labels = Record<string, string>;
interface CounterLike {
  inc(labels: Labels, value?: number): void;
}
interface HistogramLike {
  observe(labels: Labels, value: number): void;
}
interface GaugeLike {
  set(labels: Labels, value: number): void;
}
interface MetricConfig {
  name: string;
  help: string;
  labelNames: string[];
  registers: unknown[];
  buckets?: number[];
}
interface PromClientLike {
  Counter: new (config: MetricConfig) => CounterLike;
  Histogram: new (config: MetricConfig) => HistogramLike;
  Gauge: new (config: MetricConfig) => GaugeLike;
  register: RegistryLike;
}
interface RegistryLike {
  getSingleMetric(name: string): unknown;
}

/** Latency buckets of upstream calls, seconds (the client's default timeout is 5 s). */
const UPSTREAM_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Time-to-verify buckets, seconds: the same bounds as the stored histogram's. */
const TIME_TO_VERIFY_BUCKETS = TIME_TO_VERIFY_BUCKETS_MS.map((ms) => ms / 1000);
/** `VERIFICATION_DEFAULTS.metrics.prefix`. */
export const DEFAULT_METRICS_PREFIX = VERIFICATION_DEFAULTS.metrics.prefix;

/** The instruments, as createInstruments registers them. */
type Instruments = ReturnType<typeof createInstruments>;

/**
 * Counters and histograms for the host's `/metrics` (prom-client), or nothing at all when metrics
 * are off. Names carry the `metrics.prefix` (default `verification_`):
 * `starts_total{method}`, `outcomes_total{method,status}`, `refusals_total{reason}`,
 * `upstream_request_duration_seconds{operation}`, `upstream_errors_total{operation,error}`,
 * `webhook_events_total{result}`, `in_doubt_starts_total{method,result}`, `spend_total{method,currency}`
 * `fraud_suspected_total{reason,mode}` (holds of the pumping defence), `pumping_refusals_total{reason,mode}`
 * (starts it refused, or in monitor mode would have), the gauge `balance{currency}`, and the method
 * figures (each counted once per session across instances, by the instance that counted it in the
 * store): `method_sessions_total{method,country,outcome}` (outcome: started, delivered, verified,
 * expired, failed; country: the number's calling code), `method_charged_total{method,currency}` (money
 * debited by the billing rule of the method) and `method_time_to_verify_seconds{method}`.
 */
export class VerificationMetrics {
  readonly #instruments: Instruments | undefined;

  private constructor(instruments: Instruments | undefined) {
    this.#instruments = instruments;
  }

  /** Loads prom-client only when metrics are enabled; fails boot with a clear message when it is missing. */
  static async create(
    options: (MetricsOptions & { prefix: string }) | undefined,
  ): Promise<VerificationMetrics> {
    if (!options?.enabled) return new VerificationMetrics(undefined);
    let client: PromClientLike;
    try {
      const loaded = (await import('prom-client')) as unknown as PromClientLike & {
        default?: PromClientLike;
      };
      client = typeof loaded.Counter === 'function' ? loaded : (loaded.default as PromClientLike);
    } catch (error) {
      // A prom-client that is installed but fails to load is reported as itself, not as missing.
      if (!isModuleNotFound(error)) throw error;
      throw new VerificationOptionsError(
        'metrics.enabled',
        'is true but prom-client is not installed: run `npm i prom-client` or turn metrics off',
      );
    }
    const registry = (options.registry as RegistryLike | undefined) ?? client.register;
    return new VerificationMetrics(createInstruments(client, registry, options.prefix));
  }

  /** A VerificationMetrics that records nothing. */
  static disabled(): VerificationMetrics {
    return new VerificationMetrics(undefined);
  }

  get enabled(): boolean {
    return this.#instruments !== undefined;
  }

  /** A new upstream session (a paid initiation, not a coalesced duplicate). */
  started(method: string): void {
    this.#instruments?.starts.inc({ method: label(method) });
  }

  /** A session reached a terminal status (from the `verification.*` events, once per session). */
  outcome(method: string, status: string): void {
    this.#instruments?.outcomes.inc({ method: label(method), status: label(status) });
  }

  refused(reason: RefusalReason): void {
    this.#instruments?.refusals.inc({ reason });
  }

  /** Every upstream attempt: its latency; and its failure when it is one (see isUpstreamFailure). */
  upstreamRequest(info: ApiRequestInfo): void {
    if (!this.#instruments) return;
    this.#instruments.upstreamDuration.observe({ operation: info.operation }, info.durationMs / 1000);
    if (isUpstreamFailure(info))
      this.#instruments.upstreamErrors.inc({
        operation: info.operation,
        error: label(info.error ?? `http_${info.status ?? 'none'}`),
      });
  }

  /** One webhook request handled by the webhook route, by result (`processed`, `duplicate`, `invalid_signature`, ...). */
  webhookEvent(result: string): void {
    this.#instruments?.webhookEvents.inc({ result: label(result) });
  }

  /**
   * A start whose initiation's outcome is unknown (`remembered`), or the session of one that a
   * webhook revealed (`adopted`).
   */
  inDoubtStart(method: string, result: 'remembered' | 'adopted'): void {
    this.#instruments?.inDoubtStarts.inc({ method: label(method), result });
  }

  /** The price fixed at initiation (`cost`) of a new session. */
  spent(method: string, cost: Money | undefined): void {
    if (!cost || !Number.isFinite(cost.amount)) return;
    this.#instruments?.spend.inc({ method: label(method), currency: label(cost.currency) }, cost.amount);
  }

  /** A hold of the pumping defence started (once per hold), by reason and mode (`enforce`, `monitor`). */
  fraudSuspected(reason: string, mode: string): void {
    this.#instruments?.fraudSuspected.inc({ reason: label(reason), mode: label(mode) });
  }

  /** A start the pumping defence refused (`enforce`) or would have refused (`monitor`). */
  pumpingRefusal(reason: string, mode: string): void {
    this.#instruments?.pumpingRefusals.inc({ reason: label(reason), mode: label(mode) });
  }

  /** One transition of a session, counted once per session across instances (see MethodStats). */
  methodTransition(method: string, country: string, outcome: string): void {
    this.#instruments?.methodSessions.inc({
      method: label(method),
      country: label(country),
      outcome: label(outcome),
    });
  }

  /** Money the API debited for a session, at the moment its method's billing rule says. */
  methodCharged(method: string, money: Money): void {
    if (!Number.isFinite(money.amount)) return;
    this.#instruments?.methodCharged.inc(
      { method: label(method), currency: label(money.currency) },
      money.amount,
    );
  }

  /** From a session's start to its verification. */
  timeToVerify(method: string, durationMs: number): void {
    if (!Number.isFinite(durationMs) || durationMs < 0) return;
    this.#instruments?.timeToVerify.observe({ method: label(method) }, durationMs / 1000);
  }

  /** The balance as last read. */
  balance(money: Money): void {
    if (Number.isFinite(money.amount))
      this.#instruments?.balance.set({ currency: label(money.currency) }, money.amount);
  }
}

/**
 * Whether an upstream attempt is an error for the operator: no usable answer, a 5xx, or an answer
 * that stops verifications (401, 402, 403, 429, a 404 to a call not about one session: a wrong base
 * URL). A wrong code (400), an unknown id (404) or a resolved session (409) is a normal answer.
 */
export function isUpstreamFailure(info: ApiRequestInfo): boolean {
  if (info.status === undefined) return true;
  if (info.status >= 200 && info.status < 300) return info.error !== undefined;
  if (info.status === 404) return !isUnknownSession(info.operation, info.status);
  return info.status >= 500 || [401, 402, 403, 429].includes(info.status);
}

/** Label values that may come from the wire are bounded: word characters, at most 40. */
function label(value: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 40);
  return cleaned === '' ? 'unknown' : cleaned;
}

// Its return type is the Instruments type: one list of the metrics.
function createInstruments(client: PromClientLike, registry: RegistryLike, prefix: string) {
  // Reuse a metric already in the registry (two apps in one process, or a re-created module).
  const make = <T>(Kind: new (config: MetricConfig) => T, config: Omit<MetricConfig, 'registers'>): T =>
    (registry.getSingleMetric(prefix + config.name) as T | undefined) ??
    new Kind({ ...config, name: prefix + config.name, registers: [registry] });
  return {
    starts: make(client.Counter, {
      name: 'starts_total',
      help: 'Verifications started upstream (paid initiations), by method',
      labelNames: ['method'],
    }),
    outcomes: make(client.Counter, {
      name: 'outcomes_total',
      help: 'Verifications that reached a terminal status, by method and status',
      labelNames: ['method', 'status'],
    }),
    refusals: make(client.Counter, {
      name: 'refusals_total',
      help: 'Starts refused on the start route, by reason',
      labelNames: ['reason'],
    }),
    upstreamDuration: make(client.Histogram, {
      name: 'upstream_request_duration_seconds',
      help: 'Latency of each verification API attempt, by client operation',
      labelNames: ['operation'],
      buckets: UPSTREAM_BUCKETS,
    }),
    upstreamErrors: make(client.Counter, {
      name: 'upstream_errors_total',
      help: 'Verification API attempts without a usable answer or refused (5xx, 401, 402, 403, 429), by operation and error',
      labelNames: ['operation', 'error'],
    }),
    webhookEvents: make(client.Counter, {
      name: 'webhook_events_total',
      help: 'Webhook requests handled, by result',
      labelNames: ['result'],
    }),
    inDoubtStarts: make(client.Counter, {
      name: 'in_doubt_starts_total',
      help: 'Starts whose initiation outcome was unknown (remembered), and their sessions adopted when a webhook revealed them, by method',
      labelNames: ['method', 'result'],
    }),
    spend: make(client.Counter, {
      name: 'spend_total',
      help: 'Prices fixed at initiation (cost) of new verifications, by method; see GET /v1/usage for billed totals',
      labelNames: ['method', 'currency'],
    }),
    fraudSuspected: make(client.Counter, {
      name: 'fraud_suspected_total',
      help: 'Holds started by the pumping defence (or that it would start, in monitor mode), by reason and mode',
      labelNames: ['reason', 'mode'],
    }),
    pumpingRefusals: make(client.Counter, {
      name: 'pumping_refusals_total',
      help: 'Starts the pumping defence refused (enforce) or would have refused (monitor), by reason and mode',
      labelNames: ['reason', 'mode'],
    }),
    methodSessions: make(client.Counter, {
      name: 'method_sessions_total',
      help: 'Verification sessions by method, calling code of the number and transition (started, delivered, verified, expired, failed), each counted once per session',
      labelNames: ['method', 'country', 'outcome'],
    }),
    methodCharged: make(client.Counter, {
      name: 'method_charged_total',
      help: 'Money debited for verifications by the billing rule of their method (at initiation, on delivery or when verified), by method',
      labelNames: ['method', 'currency'],
    }),
    timeToVerify: make(client.Histogram, {
      name: 'method_time_to_verify_seconds',
      help: 'Time from the start of a verification to its verification, by method',
      labelNames: ['method'],
      buckets: TIME_TO_VERIFY_BUCKETS,
    }),
    balance: make(client.Gauge, {
      name: 'balance',
      help: 'Prepaid balance as last read',
      labelNames: ['currency'],
    }),
  };
}
