/** The verification methods: the domain's one list of them, and what each one does differently. */

/** Canonical method names (the guides' ones). The schema name `msgr1` is normalised to `msgr1_otp`. */
export const VERIFICATION_METHODS = [
  'reverse_flash_call',
  'flash_call',
  'msgr1_otp',
  'msgr2_bot',
  'sms',
  'operator_id',
  'voice',
] as const;
export type KnownVerificationMethod = (typeof VERIFICATION_METHODS)[number];
/** A known method, or a method this version of the package does not know yet (passed through as sent). */
export type VerificationMethod = KnownVerificationMethod | (string & { readonly __unknownMethod?: never });

/** Whether the user types a code, as `GET /methods` tells frontends. */
export type CodeEntry = 'always' | 'never' | 'on_fallback';
export const CODE_ENTRIES = ['always', 'never', 'on_fallback'] as const satisfies readonly CodeEntry[];

/** What the module does differently for one method. Everything method-specific is read from here. */
export interface MethodTraits {
  /** Pace of status polls (spec: every 1–2 s for reverse flash call, every 2–3 s otherwise, no faster). */
  readonly pollIntervalMs: number;
  /**
   * Whether the user types a code: `never` (the user places a call), `always`, or `on_fallback`
   * (operator_id: only when the operator falls back to an SMS code).
   */
  readonly codeEntry: CodeEntry;
  /**
   * When the code field shows while the session is pending: from the start, only once the API says
   * `awaiting_code` (the bot sent the code after the user shared the number; the operator fell back
   * to SMS), or never (exactly when `codeEntry` is `never`).
   */
  readonly codeAwaited: 'from_start' | 'when_api_says' | 'never';
  /**
   * Whether the API announces the code request by webhook (`verification.code_required`, operator_id's
   * SMS fallback): the record then remembers the fallback and the module emits `code_required`. A code
   * request without it (msgr2_bot's) is seen only by asking the API.
   */
  readonly codeRequestAnnounced: boolean;
  /** Offered when the host names no methods (voice is not: the API announces it as coming). */
  readonly offeredByDefault: boolean;
  /**
   * When the API debits the session's `cost` (the spec's billing table): only once it is verified,
   * once the code or call went out (`delivered`, or verified for a method whose user types a code),
   * or per attempt at initiation.
   */
  readonly billing: MethodBilling;
  /**
   * Charged only once the user's own action proves the number: the user's call (reverse flash call)
   * or the user opening the bot and sharing the number (msgr2_bot). Nobody can make the host pay for
   * such a start to a number they do not hold, so a suspected start is offered these (issue 29).
   */
  readonly chargedOnProof: boolean;
}

/** The moments the spec's billing table names. */
export type MethodBilling = 'on_verified' | 'on_delivery' | 'on_initiation';

const NORMAL_POLL_MS = 2500;
const FAST_POLL_MS = 1500;

/** A code sent to the user when the session starts (SMS, a messenger, a voice call, a flash call's caller ID). */
const CODE_FROM_START: MethodTraits = {
  pollIntervalMs: NORMAL_POLL_MS,
  codeEntry: 'always',
  codeAwaited: 'from_start',
  codeRequestAnnounced: false,
  offeredByDefault: true,
  billing: 'on_delivery',
  chargedOnProof: false,
};

const TRAITS: Readonly<Record<KnownVerificationMethod, MethodTraits>> = {
  reverse_flash_call: {
    pollIntervalMs: FAST_POLL_MS,
    codeEntry: 'never',
    codeAwaited: 'never',
    codeRequestAnnounced: false,
    offeredByDefault: true,
    billing: 'on_verified',
    chargedOnProof: true,
  },
  flash_call: CODE_FROM_START,
  msgr1_otp: { ...CODE_FROM_START, billing: 'on_initiation' },
  // Delivered (and charged) only once the user opened the bot and shared the number.
  msgr2_bot: { ...CODE_FROM_START, codeAwaited: 'when_api_says', chargedOnProof: true },
  sms: CODE_FROM_START,
  operator_id: {
    ...CODE_FROM_START,
    codeEntry: 'on_fallback',
    codeAwaited: 'when_api_says',
    codeRequestAnnounced: true,
    billing: 'on_initiation',
  },
  // The spec states no billing rule for voice (announced as coming): assumed to be charged like the
  // other calls that carry a code (flash_call), once the call went out.
  voice: { ...CODE_FROM_START, offeredByDefault: false },
};

/**
 * A method this version does not know: treated as the plain code methods are (a code field from the
 * start, the spec's normal pace), never offered unless the host names it, and counted as charged at
 * initiation (the conservative assumption: money is never under-counted).
 */
export const UNKNOWN_METHOD_TRAITS: MethodTraits = {
  ...CODE_FROM_START,
  offeredByDefault: false,
  billing: 'on_initiation',
};

/** The traits of a method; a method this version does not know gets UNKNOWN_METHOD_TRAITS. */
export function methodTraits(method: VerificationMethod): MethodTraits {
  return Object.hasOwn(TRAITS, method) ? TRAITS[method as KnownVerificationMethod] : UNKNOWN_METHOD_TRAITS;
}

/** How often a session of this method may be polled. */
export function pollIntervalMs(method: VerificationMethod): number {
  return methodTraits(method).pollIntervalMs;
}

/** The slowest poll pace of any method: for what must span one poll of whatever session (a lease, a retry). */
export const SLOWEST_POLL_INTERVAL_MS = Math.max(
  UNKNOWN_METHOD_TRAITS.pollIntervalMs,
  ...Object.values(TRAITS).map((traits) => traits.pollIntervalMs),
);

/** The methods offered when the host names none. */
export const DEFAULT_VERIFICATION_METHODS: readonly KnownVerificationMethod[] = VERIFICATION_METHODS.filter(
  (method) => TRAITS[method].offeredByDefault,
);
