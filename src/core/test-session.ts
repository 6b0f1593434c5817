/**
 * Sessions of the host's reviewer and demo numbers (`testNumbers`): the module plays them itself and
 * never asks the paid API. Their request ids carry this prefix, which an upstream id (a GUID) never
 * has, so every part of the module tells them apart by the id alone, even for a record rebuilt after
 * the store lost it.
 */
export const TEST_SESSION_PREFIX = 'test_';

/**
 * A spare test session's prefix: a test start past its network's kept sessions of the number (see
 * `testNumbers`); its entries are written evictable. Never in an upstream id or another test id (whose
 * sixth character is a hex digit or a dash).
 */
export const SPARE_TEST_SESSION_PREFIX = `${TEST_SESSION_PREFIX}x`;

/**
 * Whether a session's entries in the store are written evictable (StoreWriteOptions): a spare test
 * session's, so that a flood of test starts from one network never evicts what real sessions keep.
 */
export function isSpareTestSession(requestId: string | undefined): boolean {
  return requestId !== undefined && requestId.startsWith(SPARE_TEST_SESSION_PREFIX);
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
