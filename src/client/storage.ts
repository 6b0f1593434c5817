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
  constructor(
    private readonly storage: VerificationStorage | null,
    private readonly key: string,
  ) {}

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
