/**
 * The practical limit of a Node proxy for benchmark 1: `GET /status/:id` → upstream
 * `GET /v1/verify/:id` with Basic auth over a keep-alive agent, the upstream's status and body
 * handed back as they came. No framework, no validation, no parsing: the same hop, nothing else.
 */
import http from 'node:http';
import { forkArgument, serveCommands } from '../lib/child-process.js';

export interface MinimalProxyArgs {
  upstream: string;
  apiKey: string;
  apiSecret: string;
}

const { upstream, apiKey, apiSecret } = forkArgument<MinimalProxyArgs>();
const target = new URL(upstream);
const agent = new http.Agent({ keepAlive: true });
const authorization = `Basic ${Buffer.from(`${apiKey}:${apiSecret}`).toString('base64')}`;

const server = http.createServer((req, res) => {
  const match = /^\/status\/([^/?]+)$/.exec(req.url ?? '');
  if (req.method !== 'GET' || !match) {
    res.writeHead(404).end();
    return;
  }
  const upstreamReq = http.request(
    {
      host: target.hostname,
      port: target.port,
      path: `/v1/verify/${match[1]}`,
      method: 'GET',
      agent,
      headers: { authorization, accept: 'application/json' },
    },
    (upstreamRes) => {
      const chunks: Buffer[] = [];
      upstreamRes.on('data', (chunk: Buffer) => chunks.push(chunk));
      upstreamRes.on('end', () => {
        const body = Buffer.concat(chunks);
        res.writeHead(upstreamRes.statusCode ?? 502, {
          'content-type': upstreamRes.headers['content-type'] ?? 'application/json',
          'content-length': body.length,
        });
        res.end(body);
      });
    },
  );
  upstreamReq.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  upstreamReq.end();
});

await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };
serveCommands({ url: `http://127.0.0.1:${port}` }, {}, () => {
  server.closeAllConnections();
  server.close();
  agent.destroy();
});
