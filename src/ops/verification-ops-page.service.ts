import { Inject, Injectable, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { VerificationAccountService } from '../account/verification-account.service.js';
import { calendarDate, DAY_MS, utcDate } from '../core/clock.js';
import { isEventOf, VerificationOpsEventName } from '../core/verification-events.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { VerificationLedger } from '../ledger/verification-ledger.service.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { OPS_LANGUAGES, type OpsLanguage } from './ops-page.texts.js';
import { renderOpsPage, type OpsPageData } from './ops-page.view.js';

/** The events the page counts per day: holds, attacks, the cap, the balance, the ledger's drift. */
const INCIDENTS = [
  VerificationOpsEventName.fraudSuspected,
  VerificationOpsEventName.spendCapReached,
  VerificationOpsEventName.balanceLow,
  VerificationOpsEventName.balanceInsufficient,
  VerificationOpsEventName.ledgerDrift,
] as const;
const QUERY_FIELDS = ['lang', 'date'];

/** A page request's query, as the host's route received it. */
export interface OpsPageQuery {
  lang?: unknown;
  date?: unknown;
}

/**
 * The operations page's figures and HTML (`createVerificationOpsController` serves it behind the host's
 * guard): the day's funnel per method and operator prefix and cost per verified user (from the
 * ledger), the ledger's drift, the day's holds and attacks (each operational event, counted in the
 * store once: the module emits each once across instances) and each method's health over the last day.
 * No number, owner or secret is on it. A bad query is a 400 `validation_error` naming the field.
 */
@Injectable()
export class VerificationOpsPage implements OnModuleInit, OnModuleDestroy {
  readonly #listeners = INCIDENTS.map((name) => ({
    name,
    listener: (event: { registration?: string }) => this.#count(name, event),
  }));

  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly ledger: VerificationLedger,
    private readonly account: VerificationAccountService,
    @Optional() private readonly emitter?: EventEmitter2,
  ) {}

  onModuleInit(): void {
    for (const { name, listener } of this.#listeners) this.emitter?.on(name, listener);
  }

  onModuleDestroy(): void {
    for (const { name, listener } of this.#listeners) this.emitter?.off(name, listener);
  }

  /** The page as HTML, in `lang` (`en`, default, or `ru`), for `date` (default today). */
  async render(query: OpsPageQuery = {}): Promise<string> {
    const { lang, date } = this.#read(query);
    return renderOpsPage(await this.data(date), lang);
  }

  /** The day's ledger as CSV (the ledger's export), for the page's link. */
  async csv(query: OpsPageQuery = {}): Promise<string> {
    const { date } = this.#read(query);
    if (!this.ledger.enabled) throw invalid('date', 'the ledger is off');
    return this.ledger.csv(date);
  }

  /** What the page shows for a day. */
  async data(date: string): Promise<OpsPageData> {
    const [ledger, incidents, stats] = await Promise.all([
      this.ledger.enabled ? this.ledger.report(date) : null,
      Promise.all(
        INCIDENTS.map(async (event) => ({
          event,
          count: Number(await this.store.get(incidentKey(date, event))) || 0,
        })),
      ),
      this.account.methodStats({ days: 1 }),
    ]);
    return {
      date,
      ledger,
      incidents: incidents.filter((i) => i.count > 0),
      health: Object.entries(stats).map(([method, f]) => ({
        method,
        started: f!.started,
        verifiedRate: f!.verifiedRate ?? null,
      })),
    };
  }

  #read(query: OpsPageQuery): { lang: OpsLanguage; date: string } {
    if (typeof query !== 'object' || query === null) throw invalid('query', 'query must be lang and date');
    for (const key of Object.keys(query))
      if (!QUERY_FIELDS.includes(key)) throw invalid(key, `${key} is not a field of this page (lang, date)`);
    const lang = query.lang ?? 'en';
    if (typeof lang !== 'string' || !(OPS_LANGUAGES as readonly string[]).includes(lang))
      throw invalid('lang', `lang must be one of ${OPS_LANGUAGES.join(', ')}`);
    const today = utcDate(this.store.now());
    let date = today;
    if (query.date !== undefined) {
      try {
        date = calendarDate('ops', 'date', query.date as string);
      } catch {
        throw invalid('date', 'date must be a date like 2026-01-31');
      }
      if (date > today) throw invalid('date', 'date is after today');
    }
    return { lang: lang as OpsLanguage, date };
  }

  async #count(name: string, event: { registration?: string }): Promise<void> {
    if (!isEventOf(event, this.options.name)) return;
    await this.store
      .increment(incidentKey(utcDate(this.store.now()), name), 1, 2 * DAY_MS)
      .catch(() => undefined);
  }
}

function incidentKey(day: string, event: string): string {
  return `ops:${day}:incident:${event}`;
}

function invalid(field: string, detail: string): VerificationClientError {
  return new VerificationClientError('validation_error', detail, { errors: [{ field, message: detail }] });
}
