import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { JourneyRecord } from '../core/journey.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { RECORD_RETENTION_MS } from './session-record.repository.js';

/**
 * How long a step claim holds: longer than one paid start (the hook, the limits, the API call), short
 * enough that a crashed instance's claim frees the journey soon.
 */
export const STEP_CLAIM_TTL_MS = 60_000;

/** A claim on a journey's next step, for `release` when the step was not taken after all. */
export interface StepClaim {
  readonly key: string;
  readonly token: string;
}

/**
 * Journey records in the store, under the journey's hash tag (its first session's, so a journey and
 * its first session share one Redis Cluster slot). A journey without a record is its first
 * session alone: a record is written only once the journey holds more than that (a device hint, a
 * second step, a cancel).
 */
@Injectable()
export class JourneyRepository {
  constructor(@Inject(VerificationStore) private readonly store: VerificationStore) {}

  static key(journeyId: string): string {
    return `journey:{${journeyId}}`;
  }

  /** The claim on step `n` (0-based: the step a journey of `n` steps takes next). */
  static stepClaimKey(journeyId: string, n: number): string {
    return `journey-step:{${journeyId}}:${n}`;
  }

  async get(journeyId: string): Promise<JourneyRecord | null> {
    const raw = await this.store.get(JourneyRepository.key(journeyId));
    return raw === null ? null : (JSON.parse(raw) as JourneyRecord);
  }

  /** Saves the journey for as long as its newest session's record is kept (`expiresAt`: that session's end). */
  async save(journey: JourneyRecord, expiresAt: number): Promise<void> {
    const ttl = Math.max(expiresAt - this.store.now(), 0) + RECORD_RETENTION_MS;
    await this.store.set(JourneyRepository.key(journey.journeyId), JSON.stringify(journey), ttl);
  }

  /** Saves the journey unless the store holds one already (then that one stands). True when saved. */
  async saveIfAbsent(journey: JourneyRecord, expiresAt: number): Promise<boolean> {
    const ttl = Math.max(expiresAt - this.store.now(), 0) + RECORD_RETENTION_MS;
    return this.store.setIfAbsent(JourneyRepository.key(journey.journeyId), JSON.stringify(journey), ttl);
  }

  /**
   * Claims the journey's step `n` across every instance (set-if-absent): one switch (or cancel) at a
   * time, so two concurrent switches cannot both pay. Null when another holds it.
   */
  async claimStep(journeyId: string, n: number): Promise<StepClaim | null> {
    const claim = { key: JourneyRepository.stepClaimKey(journeyId, n), token: randomUUID() };
    return (await this.store.setIfAbsent(claim.key, claim.token, STEP_CLAIM_TTL_MS)) ? claim : null;
  }

  /** Gives a claim back while it is still this one (the step was not taken). */
  async releaseStep(claim: StepClaim): Promise<void> {
    if ((await this.store.get(claim.key)) === claim.token) await this.store.delete(claim.key);
  }
}
