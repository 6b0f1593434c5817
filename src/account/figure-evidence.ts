import { DAY_MS } from '../core/clock.js';
import { isDeviceHint, type DeviceHint, type JourneyStep } from '../core/journey.js';
import type { SessionRecord } from '../core/session-record.js';
import { methodTraits } from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import {
  admittedKey,
  claimOf,
  earlierKey,
  firstCallerKey,
  followedKey,
  giverKey,
  journeyFollowedKey,
  journeyVerifiedKey,
  recordKey,
} from './figure-evidence.keys.js';
import { HEALTH_WINDOW_MS } from './method-health.js';
import {
  callingCodeOf,
  CELL_LEVELS,
  choiceCells,
  figureCells,
  HEALTH_OUT,
  momentGroup,
  STATS_RETENTION_DAYS,
  statsNumberKey,
  storedMethod,
} from './method-figures.js';

/**
 * Who a start came from, for the method figures: the caller (owner, else client key), the client's
 * address and its network (see `figureGivers` in verification/). Each gives a bounded share.
 */
export interface FigureGivers {
  caller?: string;
  address?: string;
  network?: string;
}

/**
 * Sessions of one method a giver may add to the figures per day: beyond these, its starts are not
 * counted (a farm or a botnet's network teaches as much as a few users, however many starts it makes).
 */
export const FIGURES_SHARE_PER_DAY: Readonly<Record<keyof FigureGivers, number>> = {
  caller: 3,
  address: 5,
  network: 10,
};

/**
 * Sessions of one method a network adds to one choice cell (choiceCells) in its epoch week and the one
 * before, together (so in any 7 days, and in 7 to 14 days when none is ever left to count against a later
 * week: only each week's count is kept, not its sessions' times): past them its sessions count in the country's
 * figures but in no cell, so a farm of a few networks proving its own numbers, day after day, fills no
 * cell (operator or country × device) for everyone in it. A start without a network (the host's own
 * call) is not bounded.
 */
export const CELL_SHARE_PER_NETWORK = 2;
const WEEK_MS = 7 * DAY_MS;
/**
 * How long a network's session counted in the health cells keeps its next ones out: a judged window runs from a
 * read HEALTH_WINDOW_MS to twice that old, and a session ends up to its life (10 minutes at most) after its start
 * (the claim's): a network lands one outcome in a window, so HEALTH_MIN_SESSIONS outcomes take as many networks.
 */
export const HEALTH_CLAIM_MS = 3 * HEALTH_WINDOW_MS;

/** A pending session whose status was read this long after its start had a page following it. */
export const FOLLOWED_AFTER_MS = 5_000;
/** Session ids this instance marked as followed, remembered so a poll writes at most once. */
export const FOLLOWED_REMEMBERED = 10_000;
/** A claim outlives its session by this much, like the tracker's event claims. */
const CLAIM_RETENTION_MS = DAY_MS;

/** How a session is counted, decided at its first count: its device hint, its caller, whether that caller has a record. */
export interface Admission {
  device: DeviceHint | null;
  /** The figure cells its network's share (CELL_SHARE_PER_NETWORK) leaves it out of. */
  outOfCells: readonly string[];
  /** The caller's digest, empty when none was known. */
  caller: string;
  /** The caller had verified a number before this session started (a record). */
  vouched: boolean;
}

/**
 * What the method figures may learn from (MethodStats' admission and evidence rules, in the store).
 * A session is counted when it is its number's first with the method that day and each of its
 * givers is within its day's share (FIGURES_SHARE_PER_DAY). Its verification is evidence itself; an
 * unverified end is evidence only from a real user's journey: one verified by another step, a caller
 * with a record, or a page that followed the status (`followed`). Any other unverified end is
 * `unproven`: left out of what the policy learns (the fallback moment and the ranking). A followed
 * page ranks no method charged on proof but by a later paid step of its journey (see `proven`).
 */
export class FigureEvidence {
  readonly #followed = new Set<string>();

  constructor(
    private readonly store: VerificationStore,
    /** The registration's keyed digest: numbers, callers and networks are never named in clear or by a plain hash. */
    private readonly keys: { digest(value: string): string },
  ) {}

  /**
   * The session's admission, decided once and remembered; false when it is not counted. A counted
   * decision's entry is also its start's count claim (`started`: this call wrote it, and counts the
   * start): the first decision written stands (set-if-absent). A session that holds its number's claim
   * and is not counted (a giver past its share) keeps that in the claim itself (`<id>|0`, for as long
   * as its decision is kept): no entry of its own. `unhealthy`: see #outOfCells.
   */
  async admitted(
    record: SessionRecord,
    device: DeviceHint | undefined,
    givers: FigureGivers,
    unhealthy = false,
  ): Promise<false | (Admission & { started: boolean })> {
    const decided = admittedKey(record.requestId);
    const numberKey = statsNumberKey(record, this.keys.digest(record.phoneNumber));
    const mine = claimOf(record.requestId);
    // One round: the decision read with the number's claim for the day (a session decided already
    // holds its number's claim, or another session does: the claim changes nothing then).
    const [known, claimed] = await Promise.all([
      this.store.get(decided),
      this.store.setIfAbsent(numberKey, mine, this.untilDayEnds(record)),
    ]);
    if (known !== null) return admission(known, false);
    const holder = claimed ? mine : await this.store.get(numberKey);
    if (holder === `${mine}|0`) return false;
    let decision = '0';
    if (holder === mine || holder === record.requestId) {
      // One round: the giver shares counted, the caller's record read.
      const caller = givers.caller === undefined ? '' : this.keys.digest(givers.caller);
      const [within, vouched, outOfCells] = await Promise.all([
        this.#withinShares(record, givers),
        caller === '' ? null : this.store.get(recordKey(caller)),
        this.#outOfCells(record, device, givers.network, unhealthy),
      ]);
      if (!within) {
        // Not counted: said by the claim, kept as long as a decision would be.
        const ttl = Math.max(this.untilDayEnds(record), this.claimTtl(record));
        await this.store.set(numberKey, `${mine}|0`, ttl);
        return false;
      }
      decision = ['1', device ?? '', caller, vouched === null ? '0' : '1', outOfCells.join(',')].join('|');
    }
    if (await this.store.setIfAbsent(decided, decision, this.claimTtl(record)))
      return admission(decision, true);
    const standing = await this.store.get(decided);
    return standing === null ? false : admission(standing, false);
  }

  /**
   * Whether an unverified end of the session is evidence of a real user (see the class): for the
   * fallback moment (when real users give up), and for the ranking of methods. Of a method charged
   * on proof, a followed page is evidence of neither: its start and poll cost their giver nothing, and
   * many networks' reads within their shares would make the cheapest method look failing (moving `auto`
   * to paid ones) or sink its fallback moment to the floor. Its ends count only from givers who proved
   * a number (a record, another step of the journey verified), or whose journey went on to a step
   * charged whatever happens that a page followed (a user who left after a switch: its cost).
   */
  async proven(record: SessionRecord, admitted: Admission): Promise<{ moment: boolean; ranking: boolean }> {
    if (admitted.vouched) return { moment: true, ranking: true };
    const [journey, followed, switchedFollowed] = await Promise.all([
      this.store.get(journeyVerifiedKey(record)),
      this.store.get(followedKey(record.requestId)),
      this.store.get(journeyFollowedKey(record)),
    ]);
    const free = methodTraits(record.method).chargedOnProof;
    const real = journey !== null || switchedFollowed !== null || (followed !== null && !free);
    return { moment: real, ranking: real };
  }

  /**
   * A verified session: its journey is verified (kept with the verifying step's start, see
   * verifiedStep), and its caller has a record from now on.
   */
  async verified(record: SessionRecord, admitted: Admission): Promise<void> {
    await Promise.all([
      this.store.set(journeyVerifiedKey(record), String(record.createdAt), this.claimTtl(record)),
      admitted.caller === ''
        ? undefined
        : this.store.set(recordKey(admitted.caller), '1', STATS_RETENTION_DAYS * DAY_MS),
    ]);
  }

  /**
   * Remembers the journey's steps before `record` (a switch's counted step): when it verifies, they
   * are ended then (earlierSteps), not at their expiry.
   */
  async rememberEarlier(record: SessionRecord, earlier: readonly JourneyStep[]): Promise<void> {
    if (earlier.length === 0) return;
    const steps = earlier.map((step) => [step.requestId, step.method, step.startedAt]);
    await this.store.set(earlierKey(record.requestId), JSON.stringify(steps), this.claimTtl(record));
  }

  /** The counted steps of the journey before `record` (rememberEarlier), each with its admission. */
  async earlierSteps(record: SessionRecord): Promise<(JourneyStep & { admitted: Admission })[]> {
    if (record.journeyId === undefined) return [];
    const raw = await this.store.get(earlierKey(record.requestId));
    const steps = raw === null ? [] : (JSON.parse(raw) as [string, JourneyStep['method'], number][]);
    const decisions = await Promise.all(steps.map(([id]) => this.store.get(admittedKey(id))));
    return steps.flatMap(([requestId, method, startedAt], i) => {
      const admitted = decisions[i] === null ? false : admission(decisions[i]!, false);
      return admitted === false ? [] : [{ requestId, method, startedAt, admitted }];
    });
  }

  /**
   * Claims the end of session `requestId` (journey-ends.ts: its own, or when a later step of its
   * journey verified it, whichever comes first), kept as long as `record`'s claims.
   */
  claimEnd(requestId: string, record: SessionRecord): Promise<boolean> {
    return this.store.setIfAbsent(`stats-counted:{${requestId}}:end`, '1', this.claimTtl(record));
  }

  /**
   * Which step verified the session's journey, by start: `later` (the user switched away from this
   * one), `earlier` (a step it followed completed late, the call a user places or the operator's
   * push, while this one waited), or none. The marker an older release kept (`'1'`) reads `later`.
   */
  async verifiedStep(record: SessionRecord): Promise<'earlier' | 'later' | null> {
    const value = await this.store.get(journeyVerifiedKey(record));
    if (value === null) return null;
    return value !== '1' && Number(value) < record.createdAt ? 'earlier' : 'later';
  }

  /** A status answer of a pending session FOLLOWED_AFTER_MS or more after its start: a page follows it. */
  async followed(record: SessionRecord): Promise<void> {
    if (isTerminal(record.status) || this.store.now() - record.createdAt < FOLLOWED_AFTER_MS) return;
    if (this.#followed.has(record.requestId)) return;
    if (this.#followed.size >= FOLLOWED_REMEMBERED) this.#followed.clear();
    this.#followed.add(record.requestId);
    // A later step charged whatever happens, followed: its journey's earlier steps were a real user's too.
    const switchedTo = record.journeyId !== undefined && !methodTraits(record.method).chargedOnProof;
    await Promise.all([
      this.store.set(followedKey(record.requestId), '1', this.claimTtl(record)),
      switchedTo ? this.store.set(journeyFollowedKey(record), '1', this.claimTtl(record)) : undefined,
    ]);
  }

  /** Whether this is the caller's first counted start of the method on the session's day. */
  firstCaller(record: SessionRecord, caller: string): Promise<boolean> {
    const key = firstCallerKey(record, this.keys.digest(caller));
    return this.store.setIfAbsent(key, '1', this.untilDayEnds(record));
  }

  /** A per-day claim lasts until the session's day ends (and a minute for clocks that disagree). */
  untilDayEnds(record: SessionRecord): number {
    const dayEnds = (Math.floor(record.createdAt / DAY_MS) + 1) * DAY_MS;
    return Math.max(dayEnds - this.store.now(), 0) + 60_000;
  }

  /** Counts the start against each giver's day share; true when every one is within it. */
  async #withinShares(record: SessionRecord, givers: FigureGivers): Promise<boolean> {
    const kinds = (Object.keys(FIGURES_SHARE_PER_DAY) as (keyof FigureGivers)[]).filter(
      (kind) => givers[kind] !== undefined,
    );
    const counts = await Promise.all(
      kinds.map((kind) =>
        this.store.increment(
          giverKey(record, kind, this.keys.digest(givers[kind]!)),
          1,
          this.untilDayEnds(record),
        ),
      ),
    );
    return kinds.every((kind, i) => counts[i]!.value <= FIGURES_SHARE_PER_DAY[kind]);
  }

  /**
   * The figure cells the session is left out of: the choice's (choiceCells) its network's week share is spent
   * in (CELL_SHARE_PER_NETWORK, this epoch week's and the previous one's: a week's turn gives none afresh), or
   * all of them when it started while its method was degraded or demoted on its prefix (`unhealthy`: an
   * outage's failures teach health, not them); the health cells its network counted in within HEALTH_CLAIM_MS,
   * named HEALTH_OUT (one session an hour, every hour: a week's share left the health blind to users of networks
   * that had counted that week); and its moment group once `7~*`'s week share is spent (a thin device's moment
   * pools every device's; its calling code × device cell left out is out of the moment too: leaveOutOfShares).
   */
  async #outOfCells(
    record: SessionRecord,
    device: DeviceHint | undefined,
    network: string | undefined,
    unhealthy: boolean,
  ): Promise<string[]> {
    const choice = unhealthy ? choiceCells(record.phoneNumber, device) : [];
    if (network === undefined) return choice;
    const of = this.keys.digest(network);
    const cells = figureCells(record.phoneNumber, device); // the choice cells, then the health cells
    const health = cells.slice(CELL_LEVELS.length);
    // A week's share of the choice cells and of `7~*` (the moment's, every device's); a claim of the health cells.
    const weekly = [...cells.slice(0, CELL_LEVELS.length), health[1]!];
    const week = Math.floor(record.createdAt / WEEK_MS);
    const untilNextWeekEnds = Math.max((week + 2) * WEEK_MS - this.store.now(), 0) + 60_000;
    const key = (epoch: string, cell: string) =>
      `stats-cell-net:{${epoch}:${storedMethod(record.method)}:${cell}:${of}}`;
    const [weeks, claims] = await Promise.all([
      Promise.all(
        weekly.map((cell) =>
          Promise.all([
            this.store.increment(key(`w${week}`, cell), 1, untilNextWeekEnds),
            this.store.get(key(`w${week - 1}`, cell)),
          ]),
        ),
      ),
      // A network's next session counts in the health cells once the claim of its last counted one is over.
      Promise.all(health.map((cell) => this.store.setIfAbsent(key('h', cell), '1', HEALTH_CLAIM_MS))),
    ]);
    // The previous week in full: its sessions' times are not kept, and any of them may be within the last 7 days.
    const spent: boolean[] = [];
    for (const [now, previous] of weeks)
      spent.push(now.value + Number(previous ?? 0) > CELL_SHARE_PER_NETWORK);
    const out: string[] = [];
    for (const [i, cell] of weekly.slice(0, -1).entries())
      if (spent[i] || choice.includes(cell)) out.push(cell);
    for (const [i, cell] of health.entries()) if (!claims[i]) out.push(HEALTH_OUT + cell);
    if (spent.at(-1)) out.push(momentGroup(callingCodeOf(record.phoneNumber), device));
    return out;
  }

  /** How long a session's claims are kept: past its end, by a day. */
  claimTtl(record: SessionRecord): number {
    return Math.max(record.expiresAt - this.store.now(), 0) + CLAIM_RETENTION_MS;
  }
}

/**
 * A remembered admission: `0` (not counted), `1|device|caller|vouched|cells left out`, or an older
 * `1`/`1:desktop` (counted, no caller known).
 */
function admission(decision: string, started: boolean): false | (Admission & { started: boolean }) {
  if (!decision.startsWith('1')) return false;
  if (!decision.startsWith('1|')) {
    const device = decision.slice(2);
    return {
      device: isDeviceHint(device) ? device : null,
      outOfCells: [],
      caller: '',
      vouched: false,
      started,
    };
  }
  const [, device = '', caller = '', vouched, out = ''] = decision.split('|');
  return {
    device: isDeviceHint(device) ? device : null,
    outOfCells: out === '' ? [] : out.split(','),
    caller,
    vouched: vouched === '1',
    started,
  };
}
