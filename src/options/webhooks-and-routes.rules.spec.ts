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

/**
 * A `webhooks` object that asks for the receiver but gives nothing that checks signatures (the README's
 * `secret: process.env.VERIFICATION_WEBHOOK_SECRET!` with the variable unset) stops the boot naming
 * webhooks.secret; no `webhooks`, `{}`, `enabled: false`, a verifier or `signature: 'none'` boot as before.
 */
const UNSET = process.env.VERIFICATION_WEBHOOK_SECRET_NEVER_SET;
const MISSING_SECRET = 'is required when webhooks are enabled or configured, and is missing or empty';
const NOTHING_CHECKS: RefusalCase[] = [
  [
    'a secret from an unset variable',
    { api, webhooks: { secret: UNSET } },
    'webhooks.secret',
    MISSING_SECRET,
  ],
  ['an empty list of secrets', { api, webhooks: { secret: [] } }, 'webhooks.secret', MISSING_SECRET],
  [
    'an unset secret beside other keys',
    { api, webhooks: { secret: UNSET, path: 'hooks', confirmWithApi: true } },
    'webhooks.secret',
    MISSING_SECRET,
  ],
  [
    'a verifier left undefined',
    { api, webhooks: { verifier: undefined } },
    'webhooks.secret',
    MISSING_SECRET,
  ],
  [
    'signature standard-webhooks alone',
    { api, webhooks: { signature: 'standard-webhooks' } },
    'webhooks.secret',
    MISSING_SECRET,
  ],
  ['a path alone', { api, webhooks: { path: 'hooks' } }, 'webhooks.secret', MISSING_SECRET],
  ['decorators alone', { api, webhooks: { decorators: [] } }, 'webhooks.secret', MISSING_SECRET],
  [
    'enabled true with an unset secret',
    { api, webhooks: { enabled: true, secret: UNSET } },
    'webhooks.secret',
    MISSING_SECRET,
  ],
];
const WEBHOOK_SHAPES_BOOT: BootCase[] = [
  ['no webhooks', { api }, (r) => r.webhooks.enabled, false],
  ['webhooks {}', { api, webhooks: {} }, (r) => r.webhooks.enabled, false],
  ['enabled false', { api, webhooks: { enabled: false } }, (r) => r.webhooks.enabled, false],
  // `enabled: flag || undefined`: no key but `enabled`, so nothing asks for the receiver.
  ['enabled undefined', { api, webhooks: { enabled: undefined } }, (r) => r.webhooks.enabled, false],
  [
    'enabled false with an unset secret',
    { api, webhooks: { enabled: false, secret: UNSET } },
    (r) => r.webhooks.enabled,
    false,
  ],
  ['a secret', { api, webhooks: { secret: SECRET } }, (r) => r.webhooks.enabled, true],
  ['secrets in rotation', { api, webhooks: { secret: [SECRET, SECRET] } }, (r) => r.webhooks.enabled, true],
  ['a verifier', { api, webhooks: { verifier } }, (r) => r.webhooks.enabled, true],
  ['signature none', { api, webhooks: { signature: 'none' } }, (r) => r.webhooks.enabled, true],
  [
    'signature none with an unset secret key',
    { api, webhooks: { signature: 'none', secret: UNSET } },
    (r) => r.webhooks.enabled,
    true,
  ],
];

describe('a webhooks object that gives nothing to check signatures stops the boot; the shapes that run without boot', () => {
  itRefusesAndBoots(NOTHING_CHECKS, WEBHOOK_SHAPES_BOOT);
});
