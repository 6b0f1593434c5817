import type { MethodBilling } from '../core/verification-method.js';

/** A started session's share of the cap, kept until it ends (`ProtectionKeys.spendOpen`). */
export interface OpenSpend {
  key: string;
  windowEndsAt: number;
  minor: number;
  billing: MethodBilling;
  /** Charged on proof: nothing was reserved; counted when it ends proved (absent: reserved). */
  onProof?: boolean;
  /** Charged on proof: its callers, whose share of the proof reserve it takes when proved. */
  callers?: readonly string[];
  /** Charged on proof: where the proof reserve begins (its callers are metered past it). */
  reserveFrom?: number;
}

/** The name each field is stored under: one letter (a pending session keeps one of these). */
const STORED_NAME: Readonly<Record<keyof OpenSpend, string>> = {
  key: 'k',
  windowEndsAt: 't',
  minor: 'm',
  billing: 'b',
  onProof: 'p',
  callers: 'c',
  reserveFrom: 'r',
};
const FIELD_NAMED = new Map(Object.entries(STORED_NAME).map(([field, name]) => [name, field]));

/** How each billing is stored: one letter (a reservation's key is 16 B shorter than with the name). */
const STORED_BILLING: Readonly<Record<MethodBilling, string>> = {
  on_verified: 'v',
  on_delivery: 'd',
  on_initiation: 'i',
};
const BILLING_NAMED = new Map(Object.entries(STORED_BILLING).map(([billing, letter]) => [letter, billing]));

/** An open spend as stored: each field under its one-letter name, its billing as a letter. */
export function storedOpenSpend(open: OpenSpend): string {
  const stored: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(open))
    if (value !== undefined)
      stored[STORED_NAME[field as keyof OpenSpend]] =
        field === 'billing' ? STORED_BILLING[open.billing] : value;
  return JSON.stringify(stored);
}

/**
 * An open spend read back; one stored with long names or its billing's name (older versions) reads as
 * it was. Throws on bad JSON.
 */
export function restoredOpenSpend(value: string): OpenSpend {
  const stored = JSON.parse(value) as Record<string, unknown>;
  if ('key' in stored) return stored as unknown as OpenSpend;
  const open: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(stored)) open[FIELD_NAMED.get(name) ?? name] = field;
  open.billing = BILLING_NAMED.get(open.billing as string) ?? open.billing;
  return open as unknown as OpenSpend;
}
