import { bootstrapSampleApp } from './sample-app.js';

/** `npm start`: the sample host app on PORT (default 3000), against the embedded sandbox unless configured. */
const port = Number(process.env.PORT ?? 3000);
const sample = await bootstrapSampleApp({
  port: Number.isInteger(port) ? port : 3000,
  host: process.env.HOST,
});

const lines =
  sample.mode === 'sandbox'
    ? [
        'Running in SANDBOX MODE: no credentials needed, no real SMS or calls, nothing is charged.',
        `  embedded sandbox: ${sample.sandboxUrl} (the page's "simulated phone" plays the user's phone)`,
        '  set VERIFICATION_API_URL, VERIFICATION_API_KEY, VERIFICATION_API_SECRET and',
        '  VERIFICATION_WEBHOOK_SECRET to talk to the real service instead.',
      ]
    : ['Running in LIVE MODE against VERIFICATION_API_URL: real messages and calls, real charges.'];
console.log(['', ...lines, '', `  Open ${sample.url}/ in your browser. Ctrl+C stops.`, ''].join('\n'));

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    void sample.close().then(() => process.exit(0));
  });
