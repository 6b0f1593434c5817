import { bool, isObject, nonEmptyString, oneOf, positiveInt, type OptionRule } from '../core/option-rules.js';
import { array, matching, origin, section, whsec } from './verification-option-checks.js';
import { webhookSecrets, webhooksConfigured } from './verification-routes.rules.js';

/** The rules of `webhooks` and `routes` (spread into the module's table). Secrets are never echoed. */
export const WEBHOOK_AND_ROUTE_OPTION_RULES: readonly OptionRule[] = [
  { path: 'webhooks', checks: [section()] },
  {
    path: 'webhooks.secret',
    checks: [(v, at) => (Array.isArray(v) ? undefined : (nonEmptyString(v, at) ?? whsec(v, at)))],
  },
  { path: 'webhooks.secret[]', checks: [nonEmptyString, whsec] },
  { path: 'webhooks.signature', checks: [oneOf('standard-webhooks', 'none')] },
  {
    path: 'webhooks.verifier',
    checks: [
      (v) =>
        isObject(v) && typeof (v as { verify?: unknown }).verify === 'function'
          ? undefined
          : 'must be an object with a verify(rawBody, headers) method',
    ],
  },
  { path: 'webhooks.toleranceSeconds', checks: [positiveInt] },
  { path: 'webhooks.path', checks: [nonEmptyString] },
  { path: 'webhooks.enabled', checks: [bool] },
  { path: 'webhooks.confirmWithApi', checks: [bool] },
  {
    // A `webhooks` object that asks for the receiver (`enabled: true`, or any key beside `enabled`, such as
    // `secret: process.env.UNSET`) without a way to check signatures stops the boot: else the route is not
    // served and the API's webhooks get 404, silently. `{}` and `enabled: false` run without webhooks.
    path: 'webhooks.secret',
    required: true,
    checks: [
      (_, { parent }) =>
        parent.enabled !== false &&
        (parent.enabled === true || Object.keys(parent).some((key) => key !== 'enabled')) &&
        !webhooksConfigured(parent)
          ? 'is required when webhooks are enabled or configured, and is missing or empty (an unset environment variable?): give it, or webhooks.verifier, or signature: "none" to run unsigned, or leave webhooks out to run without them'
          : undefined,
    ],
  },
  {
    path: 'webhooks.signature',
    checks: [
      (v, { parent }) =>
        v === 'none' && (webhookSecrets(parent).length > 0 || parent.verifier !== undefined)
          ? 'is "none" while a secret or verifier is given: remove one of them'
          : undefined,
    ],
  },
  {
    path: 'webhooks.confirmWithApi',
    checks: [
      (v, { parent }) =>
        v === false && parent.signature === 'none'
          ? 'cannot be false with signature: "none": unsigned webhooks would be believed as they are'
          : undefined,
    ],
  },

  { path: 'routes', checks: [section()] },
  { path: 'routes.prefix', checks: [matching(/^[A-Za-z0-9/_\-.:]*$/, 'a URL path')] },
  { path: 'routes.enabled', checks: [bool] },
  { path: 'routes.bodyLimit', checks: [positiveInt] },
  {
    path: 'routes.allowedOrigins',
    checks: [array('must be an array of origins like ["https://shop.example"]')],
  },
  { path: 'routes.allowedOrigins[]', checks: [origin] },
];
