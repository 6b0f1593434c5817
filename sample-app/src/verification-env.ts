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
 * mode). Some but not all is a mistake worth stopping for: silently falling back to the sandbox
 * would hide it. The message names the variables, never their values.
 */
export function readLiveApiSettings(config: ConfigService): LiveApiSettings | undefined {
  const value = (name: string): string | undefined => {
    const raw = config.get<string>(name);
    return typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : undefined;
  };
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
