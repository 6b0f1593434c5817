import type { SandboxAccount } from './sandbox-accounts.js';
import type { SandboxMethod } from './sandbox.options.js';
import type { SandboxSession } from './sandbox-session.js';

/** Default client prices in kopecks (the spec's indicative prices; `msgr2_bot` is a per-account rate, 1.00 RUB here). */
export const DEFAULT_PRICES_KOPECKS: Readonly<Record<SandboxMethod, number>> = {
  reverse_flash_call: 25,
  flash_call: 80,
  msgr1_otp: 90,
  msgr2_bot: 100,
  sms: 300,
  operator_id: 200,
};

/** When a method's price is debited: the spec's billing table. */
export type ChargeMoment = 'initiation' | 'delivery' | 'verification';
export const CHARGE_MOMENT: Readonly<Record<SandboxMethod, ChargeMoment>> = {
  reverse_flash_call: 'verification',
  sms: 'delivery',
  flash_call: 'delivery',
  msgr2_bot: 'delivery',
  msgr1_otp: 'initiation',
  operator_id: 'initiation',
};

/** Initiation needs a balance that covers the price (402 `insufficient_balance` otherwise; nothing is charged then). */
export function canAfford(account: SandboxAccount, priceKopecks: number): boolean {
  return account.balanceKopecks >= priceKopecks && account.balanceKopecks > 0;
}

/**
 * Debits the session's fixed `cost` once. A deferred charge (delivery, verification) is applied even when
 * the balance no longer covers it and may take the balance below zero: the price was fixed and covered at
 * initiation and the service has done the work by then; later initiations get 402 until the balance is
 * topped up. The charge moment itself is the caller's decision (CHARGE_MOMENT).
 */
export function charge(account: SandboxAccount, session: SandboxSession, now: number): void {
  if (session.charged) return;
  account.balanceKopecks -= session.costKopecks;
  session.charged = true;
  session.chargedAt = now;
}
