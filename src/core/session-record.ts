import type { Money } from './money.js';
import { CODE_LENGTH_BOUNDS } from './verification-code.js';
import { methodTraits, type VerificationMethod } from './verification-method.js';
import { isTerminal, type VerificationStatus } from './verification-status.js';

/** What the host's `assessStart` answered for a start that went ahead, as records, events, history and spans carry it. */
export interface StartAssessmentFacts {
  /** `allow`, or `grade` (only methods charged on proof were offered). */
  decision: 'allow' | 'grade';
  /** The host's reason (a short code-like string), when it gave one. */
  reason?: string;
  /** The caller passed the host's challenge (a step-up asked for before). */
  challengePassed?: true;
}

/**
 * What the module keeps about a session it started, in the store under `session:{requestId}`.
 * Times are ms since the epoch. `cost` stays server-side. Made only by `newSessionRecord`.
 */
export interface SessionRecord {
  requestId: string;
  phoneNumber: string;
  method: VerificationMethod;
  owner?: string;
  /** What it was started for (`purpose` on start); absent: none named, or a record rebuilt without it. */
  purpose?: string;
  /** The host's `assessStart` answer for its start (absent: no hook, or an answer of `allow` without a reason). */
  assessment?: StartAssessmentFacts;
  status: VerificationStatus;
  awaitingCode: boolean;
  codeLength?: number;
  numberToCall?: string;
  deepLink?: string;
  createdAt: number;
  expiresAt: number;
  verifiedAt: number | null;
  cost?: Money;
  /** A session whose method announces its code request (operator_id) had one: code_required is due. */
  fallback?: boolean;
  /**
   * The code or call went out: the API showed `delivered`, or `verified` for a method whose user
   * types a code (the code must have reached them). Set by the tracker, never unset; what the
   * `on_delivery` billing rule charges on.
   */
  delivered?: boolean;
  /** The journey it is a step of, for steps after the first (absent: it is its own journey's first step). */
  journeyId?: string;
  /**
   * The pumping defence suspected its start (monitor mode, a passed challenge, its country under
   * attack): the method figures leave it out, so an attack cannot steer `cost_per_success`.
   */
  suspected?: boolean;
  /**
   * Rebuilt after the store lost it (a restart on MemoryStore): how many steps its journey took
   * before is then the frontend's word, so its journey takes no further paid step.
   */
  rebuilt?: boolean;
}

/**
 * Whether two records hold the same facts, as their JSON would show them: a field set to `undefined`
 * is one the JSON leaves out, and the order of fields does not matter. What decides whether an
 * observation changed a record, and so whether it is written and announced.
 */
export function sameRecord(a: SessionRecord, b: SessionRecord): boolean {
  let fields = 0;
  for (const key in a) {
    const field = key as keyof SessionRecord;
    const value = a[field];
    if (value === undefined) continue;
    fields++;
    const other = b[field];
    if (value === other) continue;
    if (field !== 'cost' || !sameMoney(value as Money, other as Money | undefined)) return false;
  }
  for (const key in b) if (b[key as keyof SessionRecord] !== undefined) fields--;
  return fields === 0;
}

function sameMoney(a: Money, b: Money | undefined): boolean {
  return b !== undefined && a.amount === b.amount && a.currency === b.currency;
}

/**
 * The name each field is stored under: one letter. A record is read back by the module alone, and
 * its long names were a third of a pending session's record.
 */
const STORED_NAME: Readonly<Record<keyof SessionRecord, string>> = {
  requestId: 'i',
  phoneNumber: 'p',
  method: 'm',
  owner: 'o',
  purpose: 'u',
  assessment: 'a',
  status: 's',
  awaitingCode: 'w',
  codeLength: 'l',
  numberToCall: 'n',
  deepLink: 'k',
  createdAt: 'c',
  expiresAt: 'e',
  verifiedAt: 'v',
  cost: 'q',
  fallback: 'f',
  delivered: 'd',
  journeyId: 'j',
  suspected: 'x',
  rebuilt: 'r',
};
const FIELD_NAMED = new Map(Object.entries(STORED_NAME).map(([field, name]) => [name, field]));

/**
 * A record as stored, less what its reader restores (`restoredRecord`): its request id when the key
 * names it (`idInKey`; a spare test slot's key names the slot, so its record keeps the id), and
 * `awaitingCode: false` and `verifiedAt: null`, every pending session's values; each field under its
 * one-letter name (STORED_NAME), its end as a time after its creation, its cost as `[amount, currency]`.
 */
export function storedRecord(record: SessionRecord, idInKey: boolean): Record<string, unknown> {
  const { requestId, awaitingCode, verifiedAt, ...rest } = record;
  const fields: Partial<SessionRecord> = {
    ...(idInKey ? {} : { requestId }),
    ...rest,
    ...(awaitingCode ? { awaitingCode } : {}),
    ...(verifiedAt === null ? {} : { verifiedAt }),
  };
  const stored: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    stored[STORED_NAME[field as keyof SessionRecord]] =
      field === 'expiresAt'
        ? record.expiresAt - record.createdAt
        : field === 'cost'
          ? [record.cost!.amount, record.cost!.currency]
          : value;
  }
  return stored;
}

/**
 * A stored record read under `requestId`'s key, whole again. A record stored with its fields' long
 * names (before they were shortened) reads as it was.
 */
export function restoredRecord(stored: Record<string, unknown>, requestId: string): SessionRecord {
  const short = 'p' in stored;
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(stored)) {
    const field = short ? (FIELD_NAMED.get(name) ?? name) : name;
    fields[field] = value;
  }
  if (short) {
    fields.expiresAt = (stored.c as number) + (stored.e as number);
    const cost = stored.q as [number, string] | undefined;
    if (cost !== undefined) fields.cost = { amount: cost[0], currency: cost[1] };
  }
  return {
    ...fields,
    requestId: fields.requestId ?? requestId,
    awaitingCode: fields.awaitingCode ?? false,
    verifiedAt: fields.verifiedAt ?? null,
  } as SessionRecord;
}

/** The spec's default session TTL (`expiry_seconds` not sent). */
export const DEFAULT_SESSION_TTL_MS = 300_000;
/** The spec's longest session TTL (`expiry_seconds` at most 600). */
export const MAX_SESSION_TTL_MS = 600_000;

/**
 * What the API said of a session: the start's answer, or a later read of it. The start's answer and
 * the session resource (`GET /v1/verify/{id}`) both fit.
 */
export interface SessionFacts {
  requestId: string;
  phoneNumber: string;
  method: VerificationMethod;
  status: VerificationStatus;
  awaitingCode?: boolean;
  codeLength?: number;
  numberToCall?: string;
  deepLink?: string;
  createdAt?: Date;
  expiresAt?: Date;
  cost?: Money;
}

/** What the module knows of a session beyond the API's word. */
export interface SessionOrigin {
  /** The `owner(req)` it was started for. */
  owner?: string;
  /** What it was started for (see SessionRecord.purpose). */
  purpose?: string;
  /** The host's risk answer for its start (see SessionRecord.assessment). */
  assessment?: StartAssessmentFacts;
  /** When it began, if the API does not say (`created_at`). */
  createdAt: number;
  /** Its TTL, if the API does not say when it ends (`expires_at`): counted from its beginning. */
  ttlMs: number;
  /**
   * `answer`: the start's own answer, kept as it is (status, code request, display data).
   * `seed`: a session found later (adopted from a webhook, rebuilt after the store lost it), recorded
   * as it was at initiation; the tracker then merges the API's current view into it like any first
   * observation, so that what became due since (code_required, the outcome) is emitted once.
   */
  as: 'answer' | 'seed';
  /** The journey it was started for by a switch (absent for a journey's first session). */
  journeyId?: string;
  /** The pumping defence suspected the start (see SessionRecord.suspected). */
  suspected?: boolean;
  /** Rebuilt from a handle or journey token after the store lost it (see SessionRecord.rebuilt). */
  rebuilt?: boolean;
}

/** The one way a SessionRecord comes to be: at start, on adoption of an in-doubt start, on recovery. */
export function newSessionRecord(facts: SessionFacts, origin: SessionOrigin): SessionRecord {
  const createdAt = facts.createdAt?.getTime() ?? origin.createdAt;
  const seed = origin.as === 'seed';
  const record: SessionRecord = {
    requestId: facts.requestId,
    phoneNumber: facts.phoneNumber,
    method: facts.method,
    owner: origin.owner,
    ...(origin.purpose === undefined ? {} : { purpose: origin.purpose }),
    ...(origin.assessment === undefined ? {} : { assessment: { ...origin.assessment } }),
    status: seed ? 'sent' : facts.status,
    awaitingCode: seed ? false : facts.awaitingCode === true,
    codeLength: facts.codeLength,
    numberToCall: facts.numberToCall,
    deepLink: facts.deepLink,
    createdAt,
    expiresAt: facts.expiresAt?.getTime() ?? createdAt + origin.ttlMs,
    verifiedAt: null,
    cost: facts.cost,
    ...(origin.journeyId === undefined ? {} : { journeyId: origin.journeyId }),
    ...(origin.suspected ? { suspected: true } : {}),
    ...(origin.rebuilt ? { rebuilt: true } : {}),
  };
  if (!seed && showsDelivery(facts.method, facts.status)) record.delivered = true;
  return record;
}

/**
 * Whether a status the API showed proves the code or call went out: `delivered`, or `verified` for
 * a method whose user types a code (a reverse flash call is verified by the user's own call).
 */
export function showsDelivery(method: VerificationMethod, status: VerificationStatus): boolean {
  return status === 'delivered' || (status === 'verified' && methodTraits(method).codeEntry !== 'never');
}

/**
 * The money the API has debited for this session so far, by its method's billing rule: the `cost`
 * fixed at initiation once the rule's moment came (at initiation; once delivered; once verified).
 * Undefined when nothing is charged yet (or ever: an undelivered SMS, a reverse flash call that
 * expired) and when the cost is unknown (a record rebuilt without it).
 */
export function chargedCost(
  record: Pick<SessionRecord, 'method' | 'status' | 'delivered' | 'cost'>,
): Money | undefined {
  if (!record.cost) return undefined;
  switch (methodTraits(record.method).billing) {
    case 'on_initiation':
      return { ...record.cost };
    case 'on_delivery':
      return record.delivered === true || showsDelivery(record.method, record.status)
        ? { ...record.cost }
        : undefined;
    case 'on_verified':
      return record.status === 'verified' ? { ...record.cost } : undefined;
  }
}

/** Whether the frontend must show a code field now. */
export function awaitsCode(record: Pick<SessionRecord, 'method' | 'awaitingCode' | 'status'>): boolean {
  if (isTerminal(record.status)) return false;
  switch (methodTraits(record.method).codeAwaited) {
    case 'never':
      return false;
    case 'when_api_says':
      return record.awaitingCode;
    case 'from_start':
      return true;
  }
}

/**
 * Whether the session's next change for the frontend comes without a webhook. The API's webhooks
 * report outcomes and announced code requests (operator_id's); a code request the API does not
 * announce (msgr2_bot's: the bot sends the code once the user shares the number) is seen only by asking.
 */
export function awaitsUnreportedChange(
  record: Pick<SessionRecord, 'method' | 'awaitingCode' | 'status'>,
): boolean {
  const traits = methodTraits(record.method);
  return (
    traits.codeAwaited === 'when_api_says' &&
    !traits.codeRequestAnnounced &&
    !record.awaitingCode &&
    !isTerminal(record.status)
  );
}

/** Whether the record owes the `code_required` event: its method announces code requests, and one came. */
export function owesCodeRequired(record: Pick<SessionRecord, 'method' | 'fallback'>): boolean {
  return methodTraits(record.method).codeRequestAnnounced && record.fallback === true;
}

/**
 * The digits the code field takes while a code is awaited: exactly `codeLength` when the API gave
 * it, else the spec's bounds (operator_id's SMS fallback, whose length the API does not say, and a
 * record rebuilt after a restart). Nothing while no code is awaited.
 */
export function codeLengthRange(
  record: Pick<SessionRecord, 'method' | 'awaitingCode' | 'status' | 'codeLength'>,
): { codeLengthMin: number; codeLengthMax: number } | undefined {
  if (!awaitsCode(record)) return undefined;
  const exact = record.codeLength;
  return exact === undefined
    ? { codeLengthMin: CODE_LENGTH_BOUNDS.min, codeLengthMax: CODE_LENGTH_BOUNDS.max }
    : { codeLengthMin: exact, codeLengthMax: exact };
}
