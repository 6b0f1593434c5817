/**
 * How tracing loads `@opentelemetry/api` (an optional peer), whatever shape a host's loader hands it over in:
 * named exports only (an ES build), a default export only (a CommonJS interop or a bundle), none of its
 * tracer at all, or an import that fails (not installed). A traced operation runs and answers in each; its
 * span is recorded when a tracer is there. Runs alone: it mocks the module (CONTRIBUTING.md).
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';

interface Recorded {
  tracer: string;
  name: string;
  attributes: Record<string, unknown>;
  ended: boolean;
}

/** A stand-in of the API's parts tracing uses, recording each span. */
function fakeApi(spans: Recorded[]) {
  return {
    trace: {
      getTracer: (tracer: string) => ({
        startActiveSpan: (name: string, _options: unknown, fn: (span: unknown) => unknown) => {
          const recorded: Recorded = { tracer, name, attributes: {}, ended: false };
          spans.push(recorded);
          return fn({
            setAttribute: (key: string, value: unknown) => void (recorded.attributes[key] = value),
            setStatus: () => undefined,
            end: () => void (recorded.ended = true),
          });
        },
      }),
    },
    SpanStatusCode: { OK: 1, ERROR: 2 },
    SpanKind: { INTERNAL: 0, SERVER: 1, CONSUMER: 4 },
  };
}

/** A start traced with the module mocked by `factory`: what it answered. */
async function tracedStart(factory: () => unknown): Promise<string> {
  jest.resetModules();
  jest.unstable_mockModule('@opentelemetry/api', factory as () => Record<string, unknown>);
  const { VerificationTracing } = await import('./verification-tracing.js');
  const tracing = new VerificationTracing();
  await tracing.load();
  return tracing.span(
    'start',
    async (span) => {
      // What a flow does while it runs: tells its span more.
      span.set({ outcome: 'sent' });
      return 'answered';
    },
    { method: 'sms' },
  );
}

afterEach(() => {
  jest.resetModules();
});

describe('loading @opentelemetry/api', () => {
  it('seen through its named exports only: each operation has its span, from the module’s tracer', async () => {
    const spans: Recorded[] = [];
    await expect(tracedStart(() => fakeApi(spans))).resolves.toBe('answered');
    expect(spans).toEqual([
      {
        tracer: 'nestjs-phone-verification',
        name: 'verification.start',
        attributes: {
          'verification.method': 'sms',
          'verification.cost_class': 'on_delivery',
          'verification.outcome': 'sent',
        },
        ended: true,
      },
    ]);
  });

  it('seen through its default export only: each operation has its span', async () => {
    const spans: Recorded[] = [];
    await expect(tracedStart(() => ({ default: fakeApi(spans) }))).resolves.toBe('answered');
    expect(spans.map((span) => [span.name, span.ended])).toEqual([['verification.start', true]]);
  });

  it('without a tracer in either shape: operations run and answer, untraced', async () => {
    await expect(tracedStart(() => ({ trace: {}, default: { trace: {} } }))).resolves.toBe('answered');
    await expect(tracedStart(() => ({ default: {} }))).resolves.toBe('answered');
  });

  it('not installed (its import fails): operations run and answer, untraced', async () => {
    await expect(
      tracedStart(() => {
        throw Object.assign(new Error("Cannot find package '@opentelemetry/api'"), {
          code: 'ERR_MODULE_NOT_FOUND',
        });
      }),
    ).resolves.toBe('answered');
  });
});
