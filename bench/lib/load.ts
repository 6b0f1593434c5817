import http from 'node:http';
import autocannon from 'autocannon';
import { percentile } from './report.js';

export interface LoadOptions {
  /** Full URL of the first request (origin + path). */
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  connections: number;
  durationSec: number;
  /** Stop after this many requests instead of after `durationSec`. */
  amount?: number;
  /** Requests per second over all connections (open loop per connection); absent = as fast as it goes. */
  overallRate?: number;
  /** Varies each request (autocannon `requests`); the first entry may use setupRequest. */
  requests?: autocannon.Request[];
}

export interface LoadResult {
  /** Responses per second (any status) over the run. */
  rps: number;
  /** 2xx responses per second. */
  okRps: number;
  /** Latency percentiles in ms, from hrtime per response (autocannon's own histogram has 1 ms steps). */
  p50: number;
  p99: number;
  responses: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
}

/** One autocannon run against a loopback server. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  let instance: autocannon.Instance | undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: options.url,
        method: options.method ?? 'GET',
        body: options.body,
        headers: options.headers,
        connections: options.connections,
        duration: options.durationSec,
        amount: options.amount,
        overallRate: options.overallRate,
        requests: options.requests,
        timeout: 10,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
  instance!.on('response', (_client, statusCode, _bytes, responseTime) => {
    latencies.push(responseTime);
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (statusCode >= 200 && statusCode < 300) ok++;
  });
  const result = await done;
  const seconds = result.duration > 0 ? result.duration : options.durationSec;
  return summarise(latencies, ok, result.errors, statusCodes, seconds);
}

/** A run's figures from its latencies (ms), 2xx count, errors and status counts over `seconds`. */
export function summarise(
  latencies: number[],
  ok: number,
  errors: number,
  statusCodes: Record<string, number>,
  seconds: number,
): LoadResult {
  return {
    rps: latencies.length / seconds,
    okRps: ok / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    responses: latencies.length,
    non2xx: latencies.length - ok,
    errors,
    statusCodes,
  };
}

export interface PacedOptions {
  url: string;
  headers?: Record<string, string>;
  /** Keep-alive connections the requests share (a request waits for a free one). */
  connections: number;
  /** Requests per second, issued evenly (autocannon's own rate limit sends each second's share in a burst). */
  rate: number;
  durationSec: number;
  /** Seconds at the same pace before the measured part, not recorded: connections up, code warm. Default 1. */
  warmupSec?: number;
  /** Keep-alive pool to use (and leave open), so that short runs in a row share warm connections. */
  agent?: http.Agent;
  /** Every measured latency (ms) is also appended here, to pool several runs into one distribution. */
  samples?: number[];
}

/**
 * An open-loop GET load at an even pace: request i is issued at start + i / rate, whatever the
 * answers before it; latency runs from issuing to the end of the answer (waiting for a free
 * connection included).
 */
export async function runPaced(options: PacedOptions): Promise<LoadResult> {
  const agent = options.agent ?? new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  let errors = 0;
  const warmup = Math.round(options.rate * (options.warmupSec ?? 1));
  const total = warmup + Math.round(options.rate * options.durationSec);
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  let measuredFrom = 0;
  const one = (recorded: boolean): Promise<void> =>
    new Promise((resolve) => {
      const issued = performance.now();
      const req = http.get(options.url, { agent, headers: options.headers }, (res) => {
        res.resume();
        res.on('end', () => {
          if (!recorded) return resolve();
          const latency = performance.now() - issued;
          latencies.push(latency);
          options.samples?.push(latency);
          const status = res.statusCode ?? 0;
          statusCodes[status] = (statusCodes[status] ?? 0) + 1;
          if (status >= 200 && status < 300) ok++;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
    });
  for (let issued = 0; issued < total;) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * options.rate) + 1);
    while (issued < due) {
      if (issued === warmup) measuredFrom = performance.now();
      inFlight.push(one(issued >= warmup));
      issued++;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - (measuredFrom || started)) / 1000;
  if (!options.agent) agent.destroy();
  return summarise(latencies, ok, errors, statusCodes, seconds);
}
