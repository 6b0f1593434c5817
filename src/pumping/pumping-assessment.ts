import type { FraudSuspectedEvent } from '../core/verification-events.js';
import type { SubjectCounts } from './pumping-counts.js';
import type { Giver, Standing } from './giver-shares.js';
import type { HoldableSubject, PumpingAttempt, Subject } from './pumping-subjects.js';
import type { StatsSubject } from './range-stats.js';
import type { Held } from './pumping-verdict.js';
import type { HoldState } from './range-stats.js';

/** The pumping defence's reading of a start, and what it answers with (types only: PumpingDefence makes them). */

/**
 * A graded answer's terms (`limits.pumping.grading`): whether the start's method is charged on proof,
 * and the methods charged on proof the account offers it. With one offered, a suspected start of a
 * method charged on proof goes ahead (nobody can make the host pay for a number they do not hold),
 * and one of another method is answered 409 `method_held` naming them.
 */
export interface GradedAnswer {
  proofCharged: boolean;
  offered: readonly string[];
}

/** What `beforeStart` is told of a start the defence would refuse (see `StartContext.suspected`). */
export interface PumpingSignal {
  reason: FraudSuspectedEvent['reason'];
  range: string;
  country: string;
}

/** The defence's reading of one start, taken before `beforeStart` and applied after the limits. */
export interface PumpingAssessment {
  attempt: PumpingAttempt;
  range: string;
  prefix: string;
  country: string;
  subjects: Subject[];
  /** Its subjects a hold can stand on: all but the country (pumping-subjects.ts, holdableOf). */
  holdable: HoldableSubject[];
  /** Its country's twins (range-stats-keys.ts): counted with its subjects. */
  twins: StatsSubject[];
  counts: Map<string, SubjectCounts>;
  /** The holds read for the holdable subjects (running or ended), by subject id. */
  holds: Map<string, HoldState | undefined>;
  /** The country's verdict on what its givers added within their shares: what strangers there are judged by. */
  underAttack: boolean;
  /** Who gives the start's evidence (giver-shares.ts). */
  givers: Giver[];
  /** Its givers' balance keys this week (RangeHolds.shareKeys), in their order: counted with the start. */
  shareKeys: string[];
  /**
   * A giver of the start is past its share and the country's twin that counts the start is under
   * attack (giver-shares.ts): the start is judged by it (a stranger's paid start graded, its callers
   * held sooner), nobody else is.
   */
  selfUnderAttack: boolean;
  /** Where its givers' balances, as read, put it (giver-shares.ts nextStanding): what counting it expects. */
  standing: Standing;
  /** Its network giver's id when the start would pass that network's share (a vote: giver-shares.ts). */
  pastNetwork: string | undefined;
  /** Set once counted: where its givers stood (its verification counts where its start did). */
  counted?: { standing: Standing };
  held: Held | undefined;
  reserve: boolean;
  /** A paid start from a caller without a record while its country is under attack: offered a method charged on proof. */
  steer: boolean;
}
