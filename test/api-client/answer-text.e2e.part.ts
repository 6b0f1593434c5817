/**
 * An answer's text as the API wrote it, whatever the transport: a long answer reaches the client in many
 * socket reads, and a read may end inside a character (Cyrillic takes two bytes in UTF-8, `€` three), so the
 * bytes are decoded once they are all in, never read by read. A local server plays the API: the sandbox's
 * answers are short.
 */
import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationApiError } from '../../src/index.js';
import { API_TRANSPORTS, rejection, SuiteClients } from './sandbox-control.js';

describe.each(API_TRANSPORTS)('the text of a long answer (transport: %s)', (transport) => {
  // Each piece 5 bytes: about 180,000 of them (900 KB, under the 1 MiB cap) span many reads, and a read's end
  // falls inside a character unless it lands on a piece's edge.
  const detail = 'Ж€'.repeat(180_000);
  const problem = { type: 'about:blank', title: 'Номер не принят', status: 422, detail };
  let server: http.Server;
  let baseUrl = '';
  const clients = new SuiteClients();

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      const text = JSON.stringify(problem);
      res.writeHead(422, {
        'content-type': 'application/problem+json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });

  afterAll(async () => {
    clients.closeAll();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("a 900 KB problem in Cyrillic and € is read whole: the error's problem holds the text the API sent", async () => {
    const client = clients.create({ baseUrl, apiKey: 'key', apiSecret: 'secret', maxRetries: 0, transport });
    const error = await rejection(client.getBalance());
    expect(error).toBeInstanceOf(VerificationApiError);
    const received = (error as VerificationApiError).problem;
    expect(received?.title).toBe(problem.title);
    expect(received?.detail).toBe(detail);
  });
});
