import type { ConfigService } from '@nestjs/config';

/** The environment variables that switch the sample from the embedded sandbox to the real service. */
export const LIVE_API_VARIABLES = [
  'VERIFICATION_API_URL',
  'VERIFICATION_API_KEY',
  'VERIFICATION_API_SECRET',
  'VERIFICATION_WEBHOOK_SECRET',
] as const;

/** Credentials of the real verification API, as given in the environment (or `.env`). */
export interface LiveApiSettings {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
}

/**
 * The real API's settings when all four variables are set, `undefined` when none is (sandbox
 * mode). Some but not all, or one set but empty (`VERIFICATION_API_SECRET=` in a deployment whose
 * secret store came up empty), is a mistake worth stopping for: silently falling back to the
 * sandbox would hide it, and would serve every code to anyone. The message names the variables,
 * never their values.
 */
export function readLiveApiSettings(config: ConfigService): LiveApiSettings | undefined {
  const value = (name: string): string | undefined => {
    const raw = config.get<string>(name);
    return typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : undefined;
  };
  const empty = LIVE_API_VARIABLES.filter(
    (name) => typeof config.get<string>(name) === 'string' && value(name) === undefined,
  );
  if (empty.length > 0)
    throw new Error(
      `sample app: ${empty.join(', ')} set but empty. ` +
        'Give all four VERIFICATION_* variables values to use the real API, or unset them all to run against the embedded sandbox.',
    );
  const present = LIVE_API_VARIABLES.filter((name) => value(name) !== undefined);
  if (present.length === 0) return undefined;
  const missing = LIVE_API_VARIABLES.filter((name) => value(name) === undefined);
  if (missing.length > 0)
    throw new Error(
      `sample app: ${present.join(', ')} set but ${missing.join(', ')} missing. ` +
        'Set all four to use the real API, or none to run against the embedded sandbox.',
    );
  return {
    baseUrl: value('VERIFICATION_API_URL')!,
    apiKey: value('VERIFICATION_API_KEY')!,
    apiSecret: value('VERIFICATION_API_SECRET')!,
    webhookSecret: value('VERIFICATION_WEBHOOK_SECRET')!,
  };
}

/**
 * Sandbox mode is for trying the sample on a laptop: its simulated phone shows every code to
 * anyone who opens the page, and its clock can be moved from the page. Under NODE_ENV=production
 * it is refused, so a deployment that lost its VERIFICATION_* variables fails at boot instead of
 * quietly serving codes.
 */
export function assertSandboxModeAllowed(config: ConfigService): void {
  if (config.get<string>('NODE_ENV')?.trim() !== 'production') return;
  throw new Error(
    'sample app: sandbox mode is refused under NODE_ENV=production (its simulated phone shows every code ' +
      `to anyone and moves the clock). Set ${LIVE_API_VARIABLES.join(', ')} to use the real API.`,
  );
}
