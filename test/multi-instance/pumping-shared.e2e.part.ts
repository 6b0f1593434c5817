/**
 * Issue 20: two instances on one Redis share what the pumping defence learns: a range's unconverted
 * starts through one instance hold it on the other (one event for the deployment), and verifications
 * completed through one instance count for starts made through the other.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { FraudSuspectedEvent } from '../../src/core/verification-events.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { check, freshIp, refusal, startFrom } from '../protection/protection-host.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { ONE_PLATFORM, type Platform } from '../support/verification-app.js';
import { startInstance, uniqueKeyPrefix, type Instance } from './deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

let rangeSerial = 0;
function freshRange(): (i: number) => string {
  rangeSerial += 1;
  const range = `+7926${String((process.pid * 11 + rangeSerial * 17) % 1000).padStart(3, '0')}`;
  return (i) => `${range}${String(i).padStart(4, '0')}`;
}

describe.each(ONE_PLATFORM)('pumping defence shared by two instances on Redis (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let instances: Instance[] = [];

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    for (const instance of instances) await instance.shutdown();
    instances = [];
  });

  async function deploy(): Promise<[Instance, Instance]> {
    const keyPrefix = uniqueKeyPrefix('pumping-shared');
    for (const [i, wiring] of (['store-ioredis-url', 'host-node-redis'] as const).entries())
      instances.push(
        await startInstance(sb, 'AB'[i]!, {
          platform,
          wiring,
          redisUrl: sharedRedisUrl(),
          keyPrefix,
          trustProxy: true,
          module: {
            webhooks: undefined,
            limits: {
              startPerIp: false,
              startPerPhone: false,
              startPerPhoneAndCaller: false,
              resendCooldownMs: false,
              // The holds' refusals by the unconverted rule (the burst rule and graded answers have their
              // own scenarios: pumping-attacks and graded-answers.e2e.part.ts).
              pumping: {
                rangeMinStarts: 4,
                countryMinStarts: 100,
                grading: false,
                freshRangeMinStarts: 100,
                freshPrefixMinStarts: 100,
              },
            },
          },
        }),
      );
    return [instances[0]!, instances[1]!];
  }

  const fraudEvents = (): FraudSuspectedEvent[] =>
    instances.flatMap((i) =>
      i.opsEvents
        .filter((e) => e.name === 'verification.fraud_suspected')
        .map((e) => e.payload as FraudSuspectedEvent),
    );

  it('unconverted starts through A hold the range on B; the hold is reported once', async () => {
    const [a, b] = await deploy();
    const number = freshRange();
    for (let i = 0; i < 4; i++) expect((await startFrom(a, freshIp(), number(i))).status).toBe(201);
    expect(refusal(await startFrom(b, freshIp(), number(4))).reason).toBe('range_held');
    expect(refusal(await startFrom(a, freshIp(), number(5))).reason).toBe('range_held');
    expect(fraudEvents()).toHaveLength(1);
  });

  it('verifications completed through B count for starts made through A: the range takes unconverted starts past the minimum and stays served', async () => {
    const [a, b] = await deploy();
    const number = freshRange();
    for (let i = 0; i < 10; i++) {
      const ip = freshIp();
      const started = await startFrom(a, ip, number(i));
      expect(started.status).toBe(201);
      const code = sb.sessionsFor(number(i)).at(-1)!.code!;
      expect((await check(b, ip, started.body.verification_id, code)).body.verified).toBe(true);
    }
    // Half of the range's starts complete: well above the conversion floor, whatever the volume.
    for (let i = 10; i < 20; i++) expect((await startFrom(b, freshIp(), number(i))).status).toBe(201);
    expect(fraudEvents()).toEqual([]);
  });
});
