/**
 * Who may spend the spend cap's last share (`limits.pumping.reserveShare`) on methods charged on
 * proof. Anyone can prove a reverse flash call to a number they hold: an attacker's own proofs
 * cost it nothing and would fill the reserve, after which every user is refused for the window.
 * So inside the reserve a caller without a record takes at most CALLER_RESERVE_SHARE of it (what its
 * proofs took of the reserve: client key, network and owner each; a carrier NAT whose users proved
 * all day before the reserve was reached is not refused inside it for those), and strangers together
 * stop at RECORD_FLOOR_SHARE of it: the rest is a floor for callers with a record. Pure.
 */

/** A start of a method charged on proof as the reserve sees it. */
export interface ProofTerms {
  /** Its callers (client key, network, owner), each metered on its own. */
  callers: readonly string[];
  /** One of them has a record of completed paid verifications. */
  known: boolean;
  reserveShare: number;
}

/** The share of the reserve one caller's proofs may take. */
export const CALLER_RESERVE_SHARE = 0.1;
/** The share of the reserve strangers' proofs may take; the rest is kept for callers with a record. */
export const RECORD_FLOOR_SHARE = 0.5;

/** Whether a start of a method charged on proof is refused by the reserve (see above). */
export function proofReserveRefuses(input: {
  consumed: number;
  estimate: number;
  capMinor: number;
  /** The most any of its callers' proofs took of the window's reserve. */
  callerSpent: number;
  terms: ProofTerms;
}): boolean {
  const { reserveShare, known } = input.terms;
  if (known || reserveShare <= 0) return false;
  const after = input.consumed + input.estimate;
  if (after <= input.capMinor * (1 - reserveShare)) return false;
  if (after > input.capMinor * (1 - reserveShare * (1 - RECORD_FLOOR_SHARE))) return true;
  return input.callerSpent + input.estimate > input.capMinor * reserveShare * CALLER_RESERVE_SHARE;
}

/** Whether the start's price reaches into the reserve at all (its callers' spending is read only then). */
export function inProofReserve(
  consumed: number,
  estimate: number,
  capMinor: number,
  terms: ProofTerms,
): boolean {
  return !terms.known && consumed + estimate > capMinor * (1 - terms.reserveShare);
}
