/**
 * Sessions of the host's reviewer and demo numbers (`testNumbers`): the module plays them itself and
 * never asks the paid API. Their request ids carry this prefix, which an upstream id (a GUID) never
 * has, so every part of the module tells them apart by the id alone, even for a record rebuilt after
 * the store lost it.
 */
export const TEST_SESSION_PREFIX = 'test_';

/**
 * A spare test session's prefix: a test start past its network's kept sessions of the number (see
 * `testNumbers`); its entries are stored in one of its network's SPARE_TEST_SESSION_SLOTS (see
 * `storedSessionId`). Never in an upstream id or another test id (whose sixth character is a hex digit
 * or a dash).
 */
export const SPARE_TEST_SESSION_PREFIX = `${TEST_SESSION_PREFIX}x`;

/**
 * Slots a client network (and a number) has for its spare test sessions of one number: a new spare
 * session takes a free slot, else its starter's own oldest, else the newest other session that took a
 * free slot and no code was checked for, else the overflow (one more slot); a session replaced there
 * reads as unknown. So a flood of free test starts keeps a bounded amount on every store (see
 * `chooseSpareSlot`).
 */
export const SPARE_TEST_SESSION_SLOTS = 5;

/** Characters of a spare test session's id that name its slot: the prefix, the pool's tag and the slot. */
const SPARE_SLOT_ID_LENGTH = SPARE_TEST_SESSION_PREFIX.length + 23;

/**
 * A spare test session's request id, as long as an upstream id (36 characters): its slot's id (`pool`, a
 * 22-character keyed digest of the number and network, and the slot's digit), then `tail` (random).
 */
export function spareTestRequestId(pool: string, slot: number, tail: string): string {
  const slotId = `${SPARE_TEST_SESSION_PREFIX}${pool.slice(0, 22).padEnd(22, '0')}${slot % 10}`;
  return `${slotId}${tail}`.slice(0, 36);
}

/** Whether a session is a spare test session (stored in its network's slot, see `storedSessionId`). */
export function isSpareTestSession(requestId: string | undefined): boolean {
  return requestId !== undefined && requestId.startsWith(SPARE_TEST_SESSION_PREFIX);
}

/**
 * What a session's keyed entries (its record, journey, played test session) are stored under: a spare
 * test session's slot, which the next spare session of the slot overwrites; any other session's own
 * request id. A read of an entry checks the request id it holds.
 */
export function storedSessionId(requestId: string): string {
  return isSpareTestSession(requestId) ? requestId.slice(0, SPARE_SLOT_ID_LENGTH) : requestId;
}

/** Whether a request id (or a journey id: its first session's) names a test number's session. */
export function isTestSession(requestId: string | undefined): boolean {
  return requestId !== undefined && requestId.startsWith(TEST_SESSION_PREFIX);
}

/** Outcomes a test number may play on its own once started (none: it waits for its code). */
export type TestNumberOutcome = 'verified' | 'expired' | 'failed' | 'code_required';
export const TEST_NUMBER_OUTCOMES = [
  'verified',
  'expired',
  'failed',
  'code_required',
] as const satisfies readonly TestNumberOutcome[];
