import { Injectable } from '@nestjs/common';
import { maskPhoneNumber } from './mask-phone-number.js';

export interface VerifiedNumber {
  phone_number: string;
  method: string;
  verified_at: string;
}

/**
 * The demo user's account, in memory: what a real host would keep in its users table. Only the
 * `verified` event handler writes here, so the page can never mark a number verified by itself.
 */
@Injectable()
export class DemoUserAccount {
  private readonly verified = new Map<string, VerifiedNumber>();

  markPhoneVerified(e164: string, method: string, verifiedAt: Date): void {
    this.verified.set(e164, {
      phone_number: maskPhoneNumber(e164),
      method,
      verified_at: verifiedAt.toISOString(),
    });
  }

  isVerified(e164: string): boolean {
    return this.verified.has(e164);
  }

  /** Newest first. */
  verifiedNumbers(): VerifiedNumber[] {
    return [...this.verified.values()].reverse();
  }
}
