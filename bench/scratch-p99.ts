import http from 'node:http';
import { apiOptions, forkHost, forkPlatformFloor, forkSandbox, postJson } from './lib/context.js';
const rate = Number(process.argv[2] ?? 600);
async function paced(url: string, seconds: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
  const rows: [number, number][] = [];
  const total = rate * seconds; const started = performance.now(); const inflight: Promise<void>[] = [];
  for (let i = 0; i < total;) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    while (i < due) { const issued = performance.now(); inflight.push(new Promise((res) => { http.get(url, { agent }, (r) => { r.resume(); r.on('end', () => { rows.push([issued - started, performance.now() - issued]); res(); }); }).on('error', () => res()); })); i++; }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight); agent.destroy();
  return rows;
}
function report(name: string, rows: [number, number][]) {
  const sorted = rows.map((r) => r[1]).sort((a, b) => a - b);
  const p = (q: number) => sorted[Math.floor(q * (sorted.length - 1))].toFixed(2);
  const p99v = sorted[Math.floor(0.99 * (sorted.length - 1))];
  const slow = rows.filter((r) => r[1] >= p99v).map((r) => Math.round(r[0]));
  console.log(`${name}: p50 ${p(0.5)} p90 ${p(0.9)} p99 ${p(0.99)} max ${p(1)}; slow at ms: ${slow.slice(0, 40).join(',')}`);
}
const sandbox = await forkSandbox();
const auth = 'Basic ' + Buffer.from(`${sandbox.ready.apiKey}:${sandbox.ready.apiSecret}`).toString('base64');
const s = await (await fetch(`${sandbox.ready.url}/v1/verify`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ phone_number: '+79990001122', method: 'sms' }) })).json() as { request_id: string };
const floor = await forkPlatformFloor('fastify', sandbox.ready);
const host = await forkHost({ platform: 'fastify', module: { api: apiOptions(sandbox.ready), statusCache: { enabled: false }, limits: { enabled: false }, expirySeconds: 600 } }, { execArgv: process.argv.slice(3) });
const start = await postJson(`${host.ready.url}/verification/start`, { phone_number: '+79990001133', method: 'sms' });
const targets: [string, string][] = [['floor', `${floor.ready.url}/status/${s.request_id}`], ['module', `${host.ready.url}/verification/status/${start.body.verification_id as string}`]];
for (const [, url] of targets) await paced(url, 1);
for (let round = 0; round < 3; round++) for (const [name, url] of targets) report(name, await paced(url, 5));
await host.close(); await floor.close(); await sandbox.close();
