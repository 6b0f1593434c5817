import type { Money } from '../core/money.js';

/** What happened, one entry each. */
export type VerificationHistoryKind = 'start' | 'switch' | 'check' | 'refusal' | 'outcome';

/**
 * One entry of a number's (and its owner's) history, for support: what was asked and what came of
 * it. Never a code, never an API credential.
 */
export interface VerificationHistoryEntry {
  at: Date;
  kind: VerificationHistoryKind;
  /** E.164, as the session records hold it. */
  phoneNumber: string;
  owner?: string;
  method?: string;
  /** The upstream request id of the session concerned (server-side only, like the events'). */
  requestId?: string;
  /** `check`: whether the code was right (`verified`) or wrong. */
  check?: 'right' | 'wrong';
  /** `outcome`: `verified`, `failed`, `expired` or `code_required`; `start`/`switch`: the session's status. */
  status?: string;
  /** `refusal`: the problem's `error_code` and the refusal's reason (protection's, or the route's). */
  errorCode?: string;
  reason?: string;
  /** What was asked: `start`, `switch`, `check`, `cancel`, … (`refusal` entries). */
  operation?: string;
  /** `start`/`switch`: the price fixed at initiation; `outcome`: what the journey was charged. Null: no price stated. */
  cost?: Money | null;
  /** What the verification was for (`purpose` on start), when one was named. */
  purpose?: string;
  /**
   * `start`/`switch`: the host's `assessStart` answer (`allow`, `grade`); `refusal`: `step_up` or
   * `refuse`, when the hook refused. With its reason.
   */
  assessment?: { decision: string; reason?: string; challengePassed?: true };
  /** `start`: the caller's pending session handed back (no new session, nothing charged). */
  resumed?: boolean;
  /**
   * `refusal` and resumed `start`: how many times the same one came within the hour of `at` when more
   * than once (then `lastAt` is the last), folded into this one entry.
   */
  count?: number;
  lastAt?: Date;
  /** A test number's (`testNumbers`): nothing was sent or billed. */
  test?: true;
}

/**
 * `VerificationHistory.list`: one number's entries (as typed: normalised as the routes do) or one
 * owner's, optionally within [from, to].
 */
export type VerificationHistoryQuery = (
  { phoneNumber: string; owner?: undefined } | { owner: string; phoneNumber?: undefined }
) & {
  from?: Date;
  to?: Date;
};
