import net from 'node:net';

export interface RawRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Sends prepared HTTP/1.1 requests over `connections` keep-alive sockets, one in flight per socket,
 * and counts the answers by status. Every request is serialised to bytes before the clock starts,
 * so that the sender costs a socket write and a header scan per request: autocannon with a
 * per-request body (`setupRequest`) tops out near the rates it is meant to measure (webhook ingest).
 * Expects answers with `content-length` (Fastify and Express both send it for JSON).
 */
export async function sendPrepared(
  url: string,
  requests: RawRequest[],
  connections: number,
): Promise<{ codes: Record<string, number>; seconds: number }> {
  const { hostname, port } = new URL(url);
  const wire = requests.map((r) => serialise(r, `${hostname}:${port}`));
  const codes: Record<string, number> = {};
  let next = 0;
  const started = process.hrtime.bigint();
  const lane = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host: hostname, port: Number(port), noDelay: true });
      let buffered: Buffer = Buffer.alloc(0);
      const sendNext = (): void => {
        if (next >= wire.length) {
          socket.end();
          resolve();
          return;
        }
        socket.write(wire[next++]!);
      };
      socket.on('connect', sendNext);
      socket.on('error', reject);
      socket.on('data', (chunk: Buffer) => {
        buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
        for (;;) {
          const headEnd = buffered.indexOf('\r\n\r\n');
          if (headEnd < 0) return;
          const head = buffered.subarray(0, headEnd).toString('latin1');
          const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
          const total = headEnd + 4 + length;
          if (buffered.length < total) return;
          const status = head.slice(9, 12);
          codes[status] = (codes[status] ?? 0) + 1;
          buffered = buffered.subarray(total);
          sendNext();
        }
      });
    });
  await Promise.all(Array.from({ length: Math.min(connections, wire.length) }, lane));
  return { codes, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

function serialise(request: RawRequest, host: string): Buffer {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${host}`, 'connection: keep-alive'];
  for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${value}`);
  if (body) lines.push(`content-length: ${body.length}`);
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  return body ? Buffer.concat([head, body]) : head;
}
