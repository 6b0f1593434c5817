import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpModule, HttpService } from '@nestjs/axios';
import { Injectable } from '@nestjs/common';
import axios, { type InternalAxiosRequestConfig } from 'axios';
import { VerificationApiClient } from '../../src/index.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { issuedCode, nextPhone } from './sandbox-control.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** A host's own use of @nestjs/axios: the static HttpModule, whose HttpService is axios' default instance. */
@Injectable()
class HostHttpClient {
  constructor(readonly http: HttpService) {}
}

/** What a host's interceptors on the shared axios instance saw: URL and Authorization header of each request. */
interface Seen {
  url: string;
  authorization: unknown;
}

/**
 * `api.transport: 'axios'` in a host that installs global axios interceptors (tracing, logging, auth of its
 * own) on the default instance, which it also uses through its own HttpModule: none of them ever sees a
 * request of ours, so the API's `Authorization: Basic …` never reaches host code.
 */
describe.each(ONE_PLATFORM)(
  'the axios transport uses an axios instance no host code shares (%s)',
  (platform) => {
    const suite = sandboxSuite({ freezeClock: false });
    let sb: VerificationSandbox;
    let host: TestApp;
    const requests: Seen[] = [];
    const responses: Seen[] = [];
    const ejects: (() => void)[] = [];

    beforeAll(async () => {
      sb = suite.sb;
      const onRequest = (config: InternalAxiosRequestConfig) => {
        requests.push({ url: String(config.url), authorization: config.headers?.Authorization });
        return config;
      };
      const id = axios.interceptors.request.use(onRequest);
      ejects.push(() => axios.interceptors.request.eject(id));
      host = await suite.boot({
        platform,
        module: {
          api: {
            baseUrl: sb.url,
            apiKey: sb.demoAccount.apiKey,
            apiSecret: sb.demoAccount.apiSecret,
            transport: 'axios',
          },
          clock: () => sb.now(),
          limits: { enabled: false },
        },
        imports: [HttpModule],
        providers: [HostHttpClient],
      });
      const shared = host.app.get(HostHttpClient).http.axiosRef;
      const responseId = shared.interceptors.response.use((response) => {
        responses.push({
          url: String(response.config.url),
          authorization: response.config.headers?.Authorization,
        });
        return response;
      });
      ejects.push(() => shared.interceptors.response.eject(responseId));
    });

    afterAll(async () => {
      for (const eject of ejects) eject();
    });

    it("the host's interceptors see the host's requests, and none of the module's", async () => {
      // The interceptors work: the host's own request through its HttpService passes both.
      const ping = await host.app.get(HostHttpClient).http.axiosRef.get(`${host.url}/host/ping`);
      expect(ping.data).toEqual({ pong: true });
      expect(requests).toEqual([{ url: `${host.url}/host/ping`, authorization: undefined }]);
      expect(responses).toEqual([{ url: `${host.url}/host/ping`, authorization: undefined }]);

      // A verification over the client routes: start, status and check each reach the API through axios.
      const phone = nextPhone();
      const started = await call(host.url, 'POST', '/verification/start', {
        phone_number: phone,
        method: 'sms',
      });
      expect(started.status).toBe(201);
      const id = started.body.verification_id as string;
      const requestId = sb.sessionsFor(phone)[0].request_id as string;
      await sb.deliver(requestId);
      expect((await call(host.url, 'GET', `/verification/status/${id}`)).status).toBe(200);
      const checked = await call(host.url, 'POST', '/verification/check', {
        verification_id: id,
        code: issuedCode(sb, requestId),
      });
      expect(checked.body).toMatchObject({ verified: true });

      expect(requests).toHaveLength(1);
      expect(responses).toHaveLength(1);
      expect(JSON.stringify([requests, responses])).not.toContain('Basic ');
    });

    it('a client made outside Nest (VerificationApiClient.create) does not use the shared instance either', async () => {
      const before = requests.length;
      const client = VerificationApiClient.create({
        baseUrl: sb.url,
        apiKey: sb.demoAccount.apiKey,
        apiSecret: sb.demoAccount.apiSecret,
        transport: 'axios',
      });
      try {
        expect((await client.getBalance()).balance.amount).toBeGreaterThan(0);
      } finally {
        client.close();
      }
      expect(requests).toHaveLength(before);
    });
  },
);

/**
 * A host that sets axios' default adapter on the library (`axios.defaults.adapter = 'fetch'`, for its own
 * requests): the module's instance, made from those defaults, still sends over Node's http with its own
 * keep-alive agent, so `close()` closes its connections.
 */
describe('the axios transport keeps its own adapter whatever the host set on the library', () => {
  const BALANCE = { balance: { amount: 1, currency: 'RUB' } };
  let server: http.Server;
  let connections = 0;
  let baseUrl = '';
  const adapter = axios.defaults.adapter;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      const text = JSON.stringify(BALANCE);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/api/`;
    axios.defaults.adapter = 'fetch';
  });
  afterAll(async () => {
    axios.defaults.adapter = adapter;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("close() closes the client's connections: the next call opens a new one", async () => {
    const client = VerificationApiClient.create({ baseUrl, apiKey: 'k', apiSecret: 's', transport: 'axios' });
    try {
      await client.getBalance();
      await client.getBalance();
      const before = connections;
      client.close();
      expect(await client.getBalance()).toEqual(BALANCE);
      expect(connections - before).toBe(1);
    } finally {
      client.close();
    }
  });
});
