import type { DeviceHint } from './device-hint.js';
import type { VerificationStorage } from './storage.js';
import type { EventSourceFactory, FetchLike } from './transport.js';

export interface VerificationClientOptions {
  /** Where the module's client routes are (`/{prefix}`). Default `/verification`. */
  baseUrl?: string;
  /** Default: the browser's `fetch`. */
  fetch?: FetchLike;
  /**
   * Headers for every call to the routes: your app's `Authorization: Bearer …` when its guard wants
   * one. An object is sent as it is; a function is asked on each call (a token that changes). With
   * them the status stream is read with `fetch` (an EventSource cannot send headers), so it still
   * streams rather than polls.
   */
  headers?: Record<string, string> | (() => Record<string, string>);
  /**
   * Opens the status stream; `null` polls only. Default: with `headers`, a fetch-based reader;
   * else the browser's `EventSource`, if any.
   */
  eventSource?: EventSourceFactory | null;
  /** Keeps the verification across a reload; `null` keeps nothing. Default `sessionStorage`. */
  storage?: VerificationStorage | null;
  storageKey?: string;
  /** The module's clock, when the page knows it better than the `Date` header (a sandbox's time travel). */
  serverNow?: () => number;
  /** Offer SMS codes through WebOTP where the browser has it. Default true. */
  webOtp?: boolean;
  /**
   * Switch to the server's next method by itself once the current one may be left
   * (`fallbackInMs` reaches 0, at the `fallback_available_at` the server learned from its figures),
   * as if the user pressed "try another way". Once per step. Default false.
   */
  autoFallback?: boolean;
  /** Jitter source for backoff (tests). */
  random?: () => number;
}

export interface StartInput {
  phoneNumber: string;
  /** A method of `GET /methods`, or `'auto'`; omitted (or `'auto'`), the server's policy picks. */
  method?: string;
  /**
   * The user's device, for the server's policy (a desktop user cannot tap a `tel:` link). Not sent
   * when omitted; `detectDevice()` gives a cheap guess.
   */
  device?: DeviceHint;
  /** What the verification is for (`signup`, `login`, `step_up`, `change_phone`, or the host's own). Not sent when omitted. */
  purpose?: string;
}
