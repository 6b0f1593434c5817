import { useEffect, useState, useSyncExternalStore } from 'react';
import { VerificationClient, type VerificationClientOptions } from '../verification-client.js';
import type { VerificationState } from '../types.js';

export interface UseVerificationOptions extends VerificationClientOptions {
  /** A client made elsewhere (shared between components); by default the hook makes its own. */
  client?: VerificationClient;
  /** Pick up the verification a reload left. Default true. */
  resume?: boolean;
}

export interface UseVerification {
  state: VerificationState;
  client: VerificationClient;
  start: VerificationClient['start'];
  check: VerificationClient['check'];
  resend: VerificationClient['resend'];
  switchMethod: VerificationClient['switchMethod'];
  cancel: VerificationClient['cancel'];
  reset: VerificationClient['reset'];
}

/** The verification client's state as React state: re-renders on every change, countdowns included. */
export function useVerification(options: UseVerificationOptions = {}): UseVerification {
  const [own] = useState(() => (options.client ? null : new VerificationClient(options)));
  const client = options.client ?? own!;
  const state = useSyncExternalStore(client.subscribe, client.getState, client.getState);
  const resume = options.resume !== false;
  useEffect(() => {
    if (resume && client.getState().phase === 'idle') void client.resume();
    // A client this hook made stops with the component; a given one belongs to its maker.
    return () => {
      if (client === own) client.dispose();
    };
  }, [client, own, resume]);
  return {
    state,
    client,
    start: (input) => client.start(input),
    check: (code) => client.check(code),
    resend: () => client.resend(),
    switchMethod: (method) => client.switchMethod(method),
    cancel: () => client.cancel(),
    reset: () => client.reset(),
  };
}

/* The browser client's types the hook's options and answer use (its values come from `nestjs-phone-verification/client`). */
export type * from '../index.js';
