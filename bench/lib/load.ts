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
  return {
    rps: latencies.length / seconds,
    okRps: ok / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    responses: latencies.length,
    non2xx: latencies.length - ok,
    errors: result.errors,
    statusCodes,
  };
}
