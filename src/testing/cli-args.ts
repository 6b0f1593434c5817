import { parseArgs } from 'node:util';
import { rubToKopecks } from './sandbox-money.js';
import { SANDBOX_POPULATION_REALISTIC } from './sandbox-population.realistic.js';
import type { SandboxOptions } from './sandbox.options.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';

/** The CLI demo account's fixed, readable credentials (a fake account: readable on purpose). */
export const CLI_DEMO_API_KEY = 'demo_key';
export const CLI_DEMO_API_SECRET = 'demo_secret';
/** `whsec_` + base64 of "sandbox-demo-webhook-secret!". */
export const CLI_DEMO_WEBHOOK_SECRET = `whsec_${Buffer.from('sandbox-demo-webhook-secret!').toString('base64')}`;

export const CLI_USAGE = `Usage: phone-verification-sandbox [options]

A spec-faithful fake of the phone verification API, for demos and tests.

Options (environment variable in brackets):
  --port <n>              port to listen on, 0 = any free port (default 4010) [SANDBOX_PORT]
  --host <addr>           address to bind (default 127.0.0.1) [SANDBOX_HOST]
  --api-key <key>         demo account api_key (default ${CLI_DEMO_API_KEY}) [SANDBOX_API_KEY]
  --api-secret <secret>   demo account api_secret (default ${CLI_DEMO_API_SECRET}) [SANDBOX_API_SECRET]
  --webhook-secret <s>    demo account webhook secret, whsec_<base64> [SANDBOX_WEBHOOK_SECRET]
  --webhook-url <url>     where the demo account's signed events are POSTed [SANDBOX_WEBHOOK_URL]
  --balance <rub>         demo account balance in RUB (default 1000)
  --no-auto-deliver       codes do not go out by themselves; use the control API's /deliver
  --no-control            refuse the /_sandbox control API (404)
  --population <name>     simulated end users for every account: realistic or off (default off)
                          [SANDBOX_POPULATION]; see docs/sandbox-population.md
  --population-seed <s>   the population's seed (default: the preset's) [SANDBOX_POPULATION_SEED]
  -h, --help              show this help
`;

export type CliCommand = { help: true } | { help: false; options: SandboxOptions };

/** Flags win over environment variables, which win over the demo defaults. Throws a readable Error on bad input. */
export function parseCliArgs(argv: string[], env: Record<string, string | undefined> = {}): CliCommand {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'api-key': { type: 'string' },
      'api-secret': { type: 'string' },
      'webhook-secret': { type: 'string' },
      'webhook-url': { type: 'string' },
      balance: { type: 'string' },
      'no-auto-deliver': { type: 'boolean' },
      'no-control': { type: 'boolean' },
      population: { type: 'string' },
      'population-seed': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true };

  const portText = values.port ?? env.SANDBOX_PORT ?? '4010';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535)
    throw new PhoneVerificationError(`--port must be an integer from 0 to 65535, got ${portText}`);

  let balance: number | undefined;
  if (values.balance !== undefined) {
    balance = Number(values.balance);
    if (values.balance.trim() === '' || rubToKopecks(balance) === undefined || balance < 0) {
      throw new PhoneVerificationError(
        `--balance must be a RUB amount >= 0 with at most 2 decimals, got ${values.balance}`,
      );
    }
  }
  const webhookUrl = values['webhook-url'] ?? env.SANDBOX_WEBHOOK_URL;
  if (webhookUrl !== undefined && !/^https?:\/\/\S+$/.test(webhookUrl)) {
    throw new PhoneVerificationError('--webhook-url must be an http(s) URL');
  }
  const webhookSecret = values['webhook-secret'] ?? env.SANDBOX_WEBHOOK_SECRET ?? CLI_DEMO_WEBHOOK_SECRET;
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(webhookSecret))
    throw new PhoneVerificationError('--webhook-secret must be whsec_<base64>');

  const populationName = values.population ?? env.SANDBOX_POPULATION ?? 'off';
  if (populationName !== 'realistic' && populationName !== 'off') {
    throw new PhoneVerificationError(`--population must be realistic or off, got ${populationName}`);
  }
  const seed = values['population-seed'] ?? env.SANDBOX_POPULATION_SEED;
  if (seed !== undefined && (seed.length < 1 || seed.length > 128)) {
    throw new PhoneVerificationError('--population-seed must be 1 to 128 characters');
  }

  return {
    help: false,
    options: {
      ...(populationName === 'realistic'
        ? { population: { ...SANDBOX_POPULATION_REALISTIC, ...(seed === undefined ? {} : { seed }) } }
        : {}),
      port,
      host: values.host ?? env.SANDBOX_HOST ?? '127.0.0.1',
      control: !values['no-control'],
      demoAccount: {
        apiKey: values['api-key'] ?? env.SANDBOX_API_KEY ?? CLI_DEMO_API_KEY,
        apiSecret: values['api-secret'] ?? env.SANDBOX_API_SECRET ?? CLI_DEMO_API_SECRET,
        webhookSecret,
        webhookUrl: webhookUrl ?? null,
        ...(balance === undefined ? {} : { balance }),
        autoDeliver: !values['no-auto-deliver'],
      },
    },
  };
}
