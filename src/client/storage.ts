import { browser } from './transport.js';

/** Where the verification in progress is kept across a reload (`sessionStorage` by default). */
export interface VerificationStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * What a reload needs: the handle, the number and method for a resend, and the journey token of a
 * verification that switched methods. Nothing else is kept.
 */
export interface SavedVerification {
  id: string;
  method: string;
  phone: string;
  token?: string;
}

export function defaultStorage(): VerificationStorage | null {
  try {
    return browser.sessionStorage ?? null;
  } catch {
    // A sandboxed frame or disabled storage throws on access: no resume then.
    return null;
  }
}

export class SavedVerificationSlot {
  private readonly storage: VerificationStorage | null;
  private readonly key: string;

  /** `storage` undefined: the page's sessionStorage; null: none. */
  constructor(storage: VerificationStorage | null | undefined, key = 'nestjs-phone-verification') {
    this.storage = storage === undefined ? defaultStorage() : storage;
    this.key = key;
  }

  read(): SavedVerification | null {
    try {
      const saved = JSON.parse(
        this.storage?.getItem(this.key) ?? 'null',
      ) as Partial<SavedVerification> | null;
      return saved && typeof saved.id === 'string' && typeof saved.method === 'string'
        ? {
            id: saved.id,
            method: saved.method,
            phone: typeof saved.phone === 'string' ? saved.phone : '',
            ...(typeof saved.token === 'string' ? { token: saved.token } : {}),
          }
        : null;
    } catch {
      return null;
    }
  }

  write(saved: SavedVerification): void {
    try {
      this.storage?.setItem(this.key, JSON.stringify(saved));
    } catch {
      // Full or disabled storage: the verification goes on, only a reload would lose it.
    }
  }

  clear(): void {
    try {
      this.storage?.removeItem(this.key);
    } catch {
      // As above.
    }
  }
}

/**
 * The verification this client follows, kept in the slot for a reload: set when a start, a switch
 * or a resume answers, moved on when a status shows another tab's switch (method, journey token).
 */
export class FollowedVerification {
  private saved: SavedVerification | undefined;

  constructor(readonly slot: SavedVerificationSlot) {}

  get current(): SavedVerification | undefined {
    return this.saved;
  }

  /** Follows the answer's verification from now on: `phone` as typed, the answer's token else `heldToken`. */
  follow(
    answer: { verification_id: string; method: string; journey_token?: string },
    phone: string,
    heldToken?: string,
  ): void {
    // A switch's answer carries the journey's newest token; a start's none (a journey of one step).
    const token = answer.journey_token ?? heldToken;
    this.saved = { id: answer.verification_id, method: answer.method, phone, ...(token ? { token } : {}) };
    this.slot.write(this.saved);
  }

  /** Another tab's switch, as a status shows it: true when the method changed. */
  moved(answer: { method: string; journey_token?: string }): boolean {
    const saved = this.saved;
    if (!saved) return false;
    const methodChanged = saved.method !== answer.method;
    const token =
      answer.journey_token && answer.journey_token !== saved.token ? answer.journey_token : saved.token;
    if (methodChanged || token !== saved.token)
      this.slot.write((this.saved = { ...saved, method: answer.method, ...(token ? { token } : {}) }));
    return methodChanged;
  }

  /** Followed no more here (the slot keeps it for `resume()`), or as kept while a reload reads its status. */
  drop(resumed?: SavedVerification): void {
    this.saved = resumed;
  }
}
