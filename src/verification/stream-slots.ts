import { VerificationClientError } from '../core/verification.errors.js';

/** Streams of callers without any key (no IP from the platform) share one cap. */
const NO_CLIENT_KEY = '';

/** Retry-After of the cap's 429: streams end with their sessions, so a slot is soon free again. */
const CAP_RETRY_AFTER_SECONDS = 5;

/** The status streams' caps (`statusStream`): how many one client may hold, and how many one verification. */
interface StreamCaps {
  maxPerClient: number;
  maxPerVerification: number;
}

/**
 * The slots of the status streams this instance holds (or is opening), per client key and per journey:
 * a stream takes one of each before its first read and gives them back when it ends. The maps hold
 * only what is open.
 */
export class StreamSlots {
  private readonly perClient = new Map<string, number>();
  private readonly perJourney = new Map<string, number>();

  constructor(private readonly caps: StreamCaps) {}

  /**
   * Takes a slot of each, answering the client's key to give them back with; none when either cap is
   * reached: 429 `rate_limit_exceeded`.
   */
  take(client: string | undefined, journeyId: string): string {
    const clientKey = client ?? NO_CLIENT_KEY;
    const held = this.perClient.get(clientKey) ?? 0;
    const ofJourney = this.perJourney.get(journeyId) ?? 0;
    if (held >= this.caps.maxPerClient || ofJourney >= this.caps.maxPerVerification)
      throw new VerificationClientError(
        'rate_limit_exceeded',
        'Too many open status streams',
        // Told apart from protection's limits: the page may close a stream or poll instead.
        { reason: 'stream_limit' },
        CAP_RETRY_AFTER_SECONDS,
      );
    this.perClient.set(clientKey, held + 1);
    this.perJourney.set(journeyId, ofJourney + 1);
    return clientKey;
  }

  release(clientKey: string, journeyId: string): void {
    release(this.perClient, clientKey);
    release(this.perJourney, journeyId);
  }
}

/** One slot given back; a key holding none is dropped. */
function release(counts: Map<string, number>, key: string): void {
  const held = (counts.get(key) ?? 1) - 1;
  if (held > 0) counts.set(key, held);
  else counts.delete(key);
}
