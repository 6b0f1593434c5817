import type { VerificationLogger } from './verification-logger.js';

/** The part of the module's logger protection writes to (redacted, filtered by `logLevels`). */
export type ProtectionLog = Pick<VerificationLogger, 'warn' | 'error'>;
