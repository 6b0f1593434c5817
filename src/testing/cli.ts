#!/usr/bin/env node
/**
 * `npx phone-verification-sandbox`: the sandbox as a standalone server. Prints its base URL and the demo
 * account's credentials, webhook secret included: this is the one place a secret is printed, on purpose,
 * because the account is a fake one made for trying the API by hand.
 */
import { CLI_USAGE, parseCliArgs, type CliCommand } from './cli-args.js';
import { VerificationSandbox } from './sandbox.js';

async function main(): Promise<void> {
  let command: CliCommand;
  try {
    command = parseCliArgs(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(`phone-verification-sandbox: ${(err as Error).message}\n\n${CLI_USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (command.help) {
    console.log(CLI_USAGE);
    return;
  }
  const sb = await VerificationSandbox.start({
    ...command.options,
    log: (line) => console.log(`[sandbox] ${line}`),
  });
  const account = command.options.demoAccount ?? {};
  console.log(`phone-verification-sandbox listening on ${sb.url}`);
  console.log(`  API:            ${sb.url}/v1 (HTTP Basic api_key:api_secret)`);
  console.log(`  api_key:        ${sb.demoAccount.apiKey}`);
  console.log(`  api_secret:     ${sb.demoAccount.apiSecret}`);
  console.log(`  webhook secret: ${sb.demoAccount.webhookSecret}`);
  console.log(`  webhook url:    ${account.webhookUrl ?? '(none; set --webhook-url)'}`);
  console.log(`  auto-deliver:   ${account.autoDeliver ? 'on' : 'off'}`);
  console.log(`  control API:    ${command.options.control ? `${sb.url}/_sandbox` : 'off'}`);
  const population = command.options.population;
  console.log(`  population:     ${population ? `realistic (seed ${String(population.seed)})` : 'off'}`);

  const stop = (): void => {
    void sb.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(`phone-verification-sandbox: ${(err as Error)?.message ?? String(err)}`);
  process.exitCode = 1;
});
