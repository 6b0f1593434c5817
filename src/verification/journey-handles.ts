import { Injectable } from '@nestjs/common';
import type { DeviceHint, JourneyStep } from '../core/journey.js';
import { VerificationHandleCodec } from '../core/verification-handle.codec.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { JourneyState, type LoadedJourney } from './journey-state.js';

/**
 * The handles a frontend holds: the sealed `verificationId` (a journey's first session) and, once a
 * journey has more than one step, its `journeyToken`, which puts the journey back when the store
 * lost it. Every flow opens them here, with the registration's one codec.
 */
@Injectable()
export class JourneyHandles {
  constructor(
    private readonly codec: VerificationHandleCodec,
    private readonly journeyState: JourneyState,
  ) {}

  /** A new journey's handle. */
  seal(journeyId: string, owner: string | undefined): string {
    return this.codec.seal(journeyId, owner);
  }

  /** The journey a handle names, or null when it does not open for this owner. */
  tryOpen(verificationId: unknown, owner: string | undefined): string | null {
    return this.codec.open(verificationId, owner);
  }

  /** The journey a handle names (404 `not_found` for anything else). */
  open(verificationId: unknown, owner: string | undefined): string {
    const journeyId = this.codec.open(verificationId, owner);
    if (journeyId === null) throw new VerificationClientError('not_found');
    return journeyId;
  }

  /** The journey a handle names (404 `not_found` for anything else), its record put back from `journeyToken` when the store lost it. */
  async openCarrying(
    verificationId: unknown,
    owner: string | undefined,
    journeyToken: string | undefined,
  ): Promise<string> {
    const journeyId = this.open(verificationId, owner);
    await this.adopt(journeyId, owner, journeyToken);
    return journeyId;
  }

  /** An opened journey (see JourneyState.load); a token is adopted first, by `adopt`. */
  load(journeyId: string, owner: string | undefined): Promise<LoadedJourney> {
    return this.journeyState.load(journeyId, owner);
  }

  /** A token that does not open for this owner, or names another journey, is no token (the handle alone decides). */
  async adopt(journeyId: string, owner: string | undefined, journeyToken: string | undefined): Promise<void> {
    if (journeyToken === undefined) return;
    const carried = this.codec.openJourney(journeyToken, owner);
    if (carried?.journeyId === journeyId) await this.journeyState.adopt(carried, owner);
  }

  /** `journeyToken` for an answer: once the journey has more than one step (the handle carries the first). */
  token(
    journey: { journeyId: string; steps: JourneyStep[]; device?: DeviceHint },
    owner: string | undefined,
  ): { journeyToken?: string } {
    if (journey.steps.length < 2) return {};
    return { journeyToken: this.codec.sealJourney(journey, owner) };
  }
}
