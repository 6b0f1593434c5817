import type { VerificationLogger } from '../observability/verification-logger.js';
import type { ResolvedVerificationOptions, WebhookVerifier } from '../options/verification.options.js';
import { StandardWebhooksVerifier } from './standard-webhooks.verifier.js';

/**
 * The host's verifier when given; otherwise Standard Webhooks with the configured secrets, its
 * tolerance measured on the module's clock (`options.clock`, which every service reads: a test
 * moving the sandbox clock moves it).
 */
export function createWebhookVerifier(
  options: ResolvedVerificationOptions,
  logger: VerificationLogger,
): WebhookVerifier | null {
  const webhooks = options.webhooks;
  if (!webhooks.enabled) return null;
  if (webhooks.verifier) return webhooks.verifier;
  if (webhooks.signature === 'none') {
    logger.warn(
      'webhooks.signature is "none": webhook signatures are NOT checked. Anyone who can reach the webhook route can make the module poll the API; use it only behind a trusted gateway that checks them.',
    );
    return null;
  }
  return new StandardWebhooksVerifier(webhooks.secrets, {
    toleranceSeconds: webhooks.toleranceSeconds,
    clock: options.clock,
  });
}
