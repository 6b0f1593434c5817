/**
 * How `metrics.enabled` loads prom-client (an optional peer): a build that exposes it only as a default
 * export (a CommonJS interop) still registers the metrics, and a prom-client that is installed but fails
 * to load fails the boot with its own error, not as "not installed" (which would send the operator to
 * install what is there). A missing prom-client is test/operations/optional-peers.spec's.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';

const real = await import('prom-client');

async function createWith(factory: () => unknown) {
  jest.resetModules();
  jest.unstable_mockModule('prom-client', factory as () => Record<string, unknown>);
  const { VerificationMetrics } = await import('./verification-metrics.js');
  return VerificationMetrics.create({ enabled: true, prefix: 'loading_' });
}

afterEach(() => {
  jest.resetModules();
});

describe('loading prom-client', () => {
  it('a prom-client seen only through its default export registers the metrics in its registry', async () => {
    const registry = new real.Registry();
    const metrics = await createWith(() => ({ default: { ...real, register: registry } }));
    expect(metrics.enabled).toBe(true);
    metrics.started('sms');
    const starts = registry.getSingleMetric('loading_starts_total');
    expect((await starts!.get()).values).toEqual([
      expect.objectContaining({ labels: { method: 'sms' }, value: 1 }),
    ]);
  });

  it('a prom-client that fails to load fails the boot with its own error', async () => {
    const broken = new Error('prom-client: cannot read its native part');
    await expect(
      createWith(() => {
        throw broken;
      }),
    ).rejects.toBe(broken);
  });
});
