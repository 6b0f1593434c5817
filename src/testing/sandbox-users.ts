/**
 * Simulated end users: the device of each phone number, and each session's user plan drawn from the
 * account's population. Every draw is a pure function of (seed, phone number, method, attempt), so the
 * same seed and the same sequence of sessions give the same users on every run.
 */
import { createHash } from 'node:crypto';
import { normalizeE164 } from './sandbox-phone.js';
import type { ResolvedPopulation, SandboxDevice } from './sandbox-population.js';
import type { SandboxSession } from './sandbox-session.js';
import type { SandboxMethod } from './sandbox.options.js';
import { validationError } from './problem.js';

/** Who acts the completion out: the sandbox itself (call, push approval) or a driver typing the code. */
export type SandboxCompletedBy = 'sandbox' | 'driver';

/** One session's simulated user, fixed at initiation. Times are ms after the session's creation. */
export interface SimulatedUser {
  device: SandboxDevice;
  /** 1 for the phone number's first session of this method on the account, 2 for the next, ... */
  attempt: number;
  /** null for reverse_flash_call (nothing is delivered). */
  delivered: boolean | null;
  /** When delivery happens; undelivered: when the channel gives up (fail, SMS fallback), or null. */
  deliveredAfterMs: number | null;
  /** The session will be completed by its user (in time or not: a user slower than the TTL finds it expired). */
  completes: boolean;
  completesAfterMs: number | null;
  completedBy: SandboxCompletedBy;
  /** sms, flash_call, msgr1_otp undelivered: the session fails at `deliveredAfterMs` instead of expiring. */
  failsUndelivered: boolean;
}

/** `GET /_sandbox/sessions/:id/user`: the simulated user's plan, for a driver to act out. */
export interface SandboxUserPlanView {
  request_id: string;
  phone_number: string;
  method: SandboxMethod;
  device: SandboxDevice;
  attempt: number;
  delivered: boolean | null;
  delivered_after_ms: number | null;
  completes: boolean;
  completes_after_ms: number | null;
  completed_by: SandboxCompletedBy;
  /** The code the user holds now: null until it is delivered (and always for reverse_flash_call). */
  code: string | null;
}

/** z of the standard normal's 90th percentile: `p90 = median · e^(σ·z)` fixes σ. */
const Z90 = 1.2815515655446004;

/** Eight uniform numbers in (0, 1) from the SHA-256 of the key: enough for one user's every decision. */
function uniforms(...key: (string | number)[]): number[] {
  const digest = createHash('sha256').update(JSON.stringify(key)).digest();
  const out: number[] = [];
  for (let i = 0; i < 8; i++) out.push((digest.readUInt32BE(i * 4) + 0.5) / 2 ** 32);
  return out;
}

/** A log-normal duration from two uniforms (Box–Muller), rounded to whole ms. */
function duration(time: { medianMs: number; p90Ms: number }, u1: number, u2: number): number {
  if (time.medianMs === 0 || time.p90Ms === time.medianMs) return time.medianMs;
  const sigma = Math.log(time.p90Ms / time.medianMs) / Z90;
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return Math.round(time.medianMs * Math.exp(sigma * z));
}

export class SandboxUsers {
  /** Devices declared by a driver, by phone number: a person's device does not depend on the account. */
  private readonly declared = new Map<string, SandboxDevice>();

  /** Declares (or, with null, forgets) the device of a phone number's user, for sessions started from now on. */
  declare(phoneNumber: unknown, device: unknown): { phone_number: string; device: SandboxDevice | null } {
    const phone = normalizeE164(phoneNumber);
    if (!phone) throw validationError('phone_number must be an E.164 number, for example +79991234567.');
    if (device !== null && device !== 'mobile' && device !== 'desktop') {
      throw validationError("device must be 'mobile', 'desktop' or null");
    }
    if (device === null) this.declared.delete(phone);
    else this.declared.set(phone, device);
    return { phone_number: phone, device };
  }

  /** The declared device, else the population's deterministic draw (a `desktopShare` of numbers are desktop). */
  deviceOf(population: ResolvedPopulation, phoneNumber: string): SandboxDevice {
    const declared = this.declared.get(phoneNumber);
    if (declared) return declared;
    return uniforms(population.seed, phoneNumber, 'device')[0]! < population.desktopShare
      ? 'desktop'
      : 'mobile';
  }

  /** The user of a new session, or undefined when the population says nothing about `method`. */
  draw(
    population: ResolvedPopulation,
    phoneNumber: string,
    method: SandboxMethod,
    attempt: number,
  ): SimulatedUser | undefined {
    const byDevice = population.methods[method];
    if (!byDevice) return undefined;
    const device = this.deviceOf(population, phoneNumber);
    const b = byDevice[device];
    const [uDeliver, uComplete, d1, d2, c1, c2] = uniforms(population.seed, phoneNumber, method, attempt) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const userMs = duration(b.completionTime, c1, c2);
    if (method === 'reverse_flash_call') {
      const completes = uComplete < b.completionRate;
      return {
        device,
        attempt,
        delivered: null,
        deliveredAfterMs: null,
        completes,
        completesAfterMs: completes ? userMs : null,
        completedBy: 'sandbox',
        failsUndelivered: false,
      };
    }
    const delivered = uDeliver < b.deliveryRate;
    const deliveryMs = duration(b.deliveryTime, d1, d2);
    // operator_id: an undelivered push falls back to an SMS code, which the user may still type.
    const completes = (delivered || method === 'operator_id') && uComplete < b.completionRate;
    const failsUndelivered = !delivered && b.undelivered === 'fail';
    return {
      device,
      attempt,
      delivered,
      deliveredAfterMs: delivered || method === 'operator_id' || failsUndelivered ? deliveryMs : null,
      completes,
      completesAfterMs: completes ? deliveryMs + userMs : null,
      completedBy: method === 'operator_id' && delivered ? 'sandbox' : 'driver',
      failsUndelivered,
    };
  }
}

/** The plan as the control API shows it; the code only once the user has it. */
export function toUserPlanView(session: SandboxSession, user: SimulatedUser): SandboxUserPlanView {
  return {
    request_id: session.requestId,
    phone_number: session.phoneNumber,
    method: session.method,
    device: user.device,
    attempt: user.attempt,
    delivered: user.delivered,
    delivered_after_ms: user.deliveredAfterMs,
    completes: user.completes,
    completes_after_ms: user.completesAfterMs,
    completed_by: user.completedBy,
    code: session.deliveredAt === null ? null : session.code,
  };
}
