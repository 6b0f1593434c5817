// Scratch (not committed): MONITOR one start/check through a 2 ms proxy; prints command batches with gaps.
import { Redis } from 'ioredis';
import { VerificationSandbox } from '../src/testing/index.js';
import { forkDelayingProxy, startsHostConfig, PhoneNumbers } from './lib/context.js';
import { startHostApp } from './lib/host-app.js';

const direct = 'redis://127.0.0.1:6390';
const sb = await VerificationSandbox.start({ port: 0, demoAccount: { balance: 1_000_000_000 } });
const ready = { url: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret, webhookSecret: sb.demoAccount.webhookSecret };
const proxy = await forkDelayingProxy(direct, Number(process.env.DELAY ?? 2));
const host = await startHostApp(startsHostConfig(ready, proxy.ready.url));
const phones = new PhoneNumbers();
async function json(url: string, method: string, body: unknown, client: string) {
  const t = performance.now();
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', 'x-bench-client': client }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const b = (await res.json()) as Record<string, unknown>;
  return { ms: performance.now() - t, status: res.status, body: b };
}
async function journey(i: number, log?: (s: string) => void) {
  const client = `c-${i}-${Math.random()}`;
  log?.('START');
  const s = await json(`${host.url}/verification/start`, 'POST', { phone_number: phones.take(), method: 'sms' }, client);
  log?.(`START done ${s.ms.toFixed(2)} ms`);
  const id = String(s.body.verification_id);
  await json(`${host.url}/verification/status/${id}`, 'GET', undefined, client);
  log?.('STATUS');
  const st = await json(`${host.url}/verification/status/${id}`, 'GET', undefined, client);
  log?.(`STATUS done ${st.ms.toFixed(2)}`);
  log?.('CHECK');
  const c = await json(`${host.url}/verification/check`, 'POST', { verification_id: id, code: '0000' }, client);
  log?.(`CHECK done ${c.ms.toFixed(2)}`);
}
for (let i = 0; i < Number(process.env.WARM ?? 30); i++) await journey(i);
const mon = new Redis(direct);
const lines: string[] = [];
const t0 = Date.now();
await new Promise<void>((resolve) => {
  mon.monitor((err, m) => {
    if (err) throw err;
    m!.on('monitor', (time: string, args: string[]) => {
      lines.push(`${((Number(time) * 1000) - t0).toFixed(2)} ${args.slice(0,3).map((a) => a.length > 40 ? a.slice(0, 40) + '…' : a).join(' ').replace(/bench:[0-9a-f]+:/g,'')}`);
    });
    resolve();
  });
});
await new Promise((r) => setTimeout(r, 50));
for (let k = 0; k < Number(process.env.N ?? 2); k++)
  await journey(1000 + k, (s) => lines.push(`${(Date.now() - t0).toFixed(2)} ---- ${s}`));
await new Promise((r) => setTimeout(r, 50));
console.log(lines.join('\n'));
mon.disconnect();
await host.close();
await proxy.close();
await sb.close();
process.exit(0);
