import { describe } from '@jest/globals';
import {
  SECRET,
  api,
  itRefusesAndBoots,
  itRefusesEachCase,
  type BootCase,
  type RefusalCase,
} from '../../test/support/option-refusals.js';
import { WEBHOOK_AND_ROUTE_OPTION_RULES } from './webhooks-and-routes.rules.js';

/** One wrong value per rule of `webhooks` and `routes`: [case, options, field named, words of the message]. */
const CASES: RefusalCase[] = [
  ['webhooks', { api, webhooks: 'on' }, 'webhooks', 'must be an object'],

  [
    'webhooks.secret',
    { api, webhooks: { secret: 'hunter2' } },
    'webhooks.secret',
    'Standard Webhooks secret',
  ],

  [
    'webhooks.secret[]',
    { api, webhooks: { secret: [SECRET, ''] } },
    'webhooks.secret[1]',
    'non-empty string',
  ],

  // The prefix alone is no secret: a host that lost the key's text while copying it would accept any signer.
  [
    'webhooks.secret, its prefix alone',
    { api, webhooks: { secret: 'whsec_' } },
    'webhooks.secret',
    'Standard Webhooks secret',
  ],

  [
    'webhooks.secret[], its prefix alone',
    { api, webhooks: { secret: [SECRET, 'whsec_'] } },
    'webhooks.secret[1]',
    'Standard Webhooks secret',
  ],

  [
    'webhooks.signature',
    { api, webhooks: { signature: 'hmac' } },
    'webhooks.signature',
    '"standard-webhooks" or "none"',
  ],

  ['webhooks.verifier', { api, webhooks: { verifier: {} } }, 'webhooks.verifier', 'verify(rawBody, headers)'],

  [
    'webhooks.toleranceSeconds',
    { api, webhooks: { toleranceSeconds: 0 } },
    'webhooks.toleranceSeconds',
    'positive',
  ],

  ['webhooks.path', { api, webhooks: { path: '' } }, 'webhooks.path', 'non-empty string'],

  ['webhooks.enabled', { api, webhooks: { enabled: 'yes' } }, 'webhooks.enabled', 'must be true or false'],

  [
    'webhooks.confirmWithApi',
    { api, webhooks: { confirmWithApi: 1 } },
    'webhooks.confirmWithApi',
    'true or false',
  ],

  [
    'webhooks enabled without a secret',
    { api, webhooks: { enabled: true } },
    'webhooks.secret',
    'is required when webhooks are enabled',
  ],

  [
    'signature none with a secret',
    { api, webhooks: { signature: 'none', secret: SECRET } },
    'webhooks.signature',
    'is "none" while a secret or verifier is given',
  ],

  [
    'signature none without confirming',
    { api, webhooks: { signature: 'none', confirmWithApi: false } },
    'webhooks.confirmWithApi',
    'cannot be false with signature: "none"',
  ],

  ['routes', { api, routes: 5 }, 'routes', 'must be an object'],

  ['routes.prefix', { api, routes: { prefix: 'a b' } }, 'routes.prefix', 'must be a URL path (got "a b")'],

  ['routes.enabled', { api, routes: { enabled: 0 } }, 'routes.enabled', 'true or false'],

  ['routes.bodyLimit', { api, routes: { bodyLimit: 0 } }, 'routes.bodyLimit', 'positive integer'],

  [
    'routes.allowedOrigins',
    { api, routes: { allowedOrigins: 'x' } },
    'routes.allowedOrigins',
    'array of origins',
  ],

  [
    'routes.allowedOrigins[]',
    { api, routes: { allowedOrigins: ['https://a.example/path'] } },
    'routes.allowedOrigins[0]',
    'scheme, host and port only',
  ],
];

describe('the rules of `webhooks` and `routes`: each refuses what it should, naming the field', () => {
  itRefusesEachCase(CASES, WEBHOOK_AND_ROUTE_OPTION_RULES);
});

/** The signature rules' other shapes: a verifier counts as a secret does; each rule refuses only its pair. */
const verifier = { verify: () => true };
const SIGNATURE_REFUSED: RefusalCase[] = [
  [
    'signature none with a verifier',
    { api, webhooks: { signature: 'none', verifier } },
    'webhooks.signature',
    'is "none" while a secret or verifier is given',
  ],
];
const SIGNATURE_BOOTS: BootCase[] = [
  [
    'signature standard-webhooks with a secret',
    { api, webhooks: { signature: 'standard-webhooks', secret: SECRET } },
    (r) => r.webhooks.enabled,
    true,
  ],
  [
    'confirmWithApi false with a secret',
    { api, webhooks: { secret: SECRET, confirmWithApi: false } },
    (r) => r.webhooks.confirmWithApi,
    false,
  ],
  [
    'confirmWithApi true with signature none',
    { api, webhooks: { signature: 'none', confirmWithApi: true } },
    (r) => r.webhooks.confirmWithApi,
    true,
  ],
];

describe('the signature rules refuse only the pair they name', () => {
  itRefusesAndBoots(SIGNATURE_REFUSED, SIGNATURE_BOOTS);
});
