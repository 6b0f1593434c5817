import { describe, expect, it } from '@jest/globals';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { PLATFORMS } from '../support/verification-app.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import {
  CapturingLogger,
  moduleOptions,
  payloadFor,
  postWebhook,
  signed,
  startHost,
  startSession,
} from './harness.js';

/**
 * A webhook whose content type the host does not parse is a 415 (the sender stops retrying), not a
 * 503 "the app has no rawBody" (which the sender would retry forever and which sends the operator
 * after a fix that is already in place). The 503 stays for an app that really lacks `rawBody: true`.
 */
describe.each(PLATFORMS)('webhook content types (%s)', (platform) => {
  const suite = sandboxSuite();

  const route = (): string => `${suite.host!.url}/verification/webhooks`;
  const ts = (): number => Math.floor(suite.sb.now() / 1000);

  it('unsigned, with a +json type the host does not parse: 415, no error logged, nothing asked upstream', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { module: { webhooks: { signature: 'none' } }, logger });
    const s = await startSession(suite.host, suite.sb, 'sms');
    const gets = suite.sb.requestCount('GET /v1/verify/:id');
    const res = await postWebhook(route(), {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify(payloadFor('verification.verified', s.requestId)),
    });
    expect(res.status).toBe(415);
    // A type of any length is named in the detail by its first 80 characters.
    const long = `application/vnd.${'x'.repeat(80)}+json`;
    const longRes = await postWebhook(route(), { headers: { 'content-type': long }, body: '{}' });
    expect(longRes.status).toBe(415);
    // Fastify refuses a content type it has no parser for itself, before the route (its own 415).
    if (platform === 'express') {
      expect(res.contentType).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        status: 415,
        error_code: 'unsupported_media_type',
        detail: 'This app does not read application/merge-patch+json bodies; send application/json',
      });
      expect(longRes.body.detail).toBe(
        `This app does not read ${long.slice(0, 80)} bodies; send application/json`,
      );
    }
    expect(logger.at('error')).toEqual([]);
    expect(logger.at('warn').some((m) => m.includes('rawBody'))).toBe(false);
    expect(suite.sb.requestCount('GET /v1/verify/:id')).toBe(gets);
  });

  it('signed, with a type that is not JSON: 415 unsupported_media_type from the module on both platforms', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { logger });
    const s = await startSession(suite.host, suite.sb, 'sms');
    const delivery = signed(
      suite.sb.demoAccount.webhookSecret,
      payloadFor('verification.verified', s.requestId),
      {
        timestampSeconds: ts(),
      },
    );
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await postWebhook(route(), {
        headers: { ...delivery.headers, 'content-type': contentType },
        body: delivery.body,
      });
      expect({ contentType, status: res.status, code: res.body.error_code }).toEqual({
        contentType,
        status: 415,
        code: 'unsupported_media_type',
      });
    }
    expect(logger.at('error')).toEqual([]);
    // The same delivery as application/json (with a charset) is processed.
    const ok = await postWebhook(route(), {
      headers: { ...delivery.headers, 'content-type': 'application/json; charset=utf-8' },
      body: delivery.body,
    });
    expect(ok.status).toBe(200);
  });

  it('signed, with a type that only begins like JSON (json-seq, jsonl, json5): 415 as a type that is not JSON, nothing asked upstream', async () => {
    suite.host = await startHost(platform, suite.sb);
    const s = await startSession(suite.host, suite.sb, 'sms');
    const gets = suite.sb.requestCount('GET /v1/verify/:id');
    const delivery = signed(
      suite.sb.demoAccount.webhookSecret,
      payloadFor('verification.verified', s.requestId),
      { timestampSeconds: ts() },
    );
    for (const contentType of ['application/json-seq', 'application/jsonl', 'application/json5']) {
      const res = await postWebhook(route(), {
        headers: { ...delivery.headers, 'content-type': contentType },
        body: delivery.body,
      });
      expect({ contentType, status: res.status }).toEqual({ contentType, status: 415 });
      // Express hands it to the route unread: the module says the type is not JSON, not that the app
      // fails to read a JSON type (Fastify refuses it before the route, with its own 415).
      if (platform === 'express')
        expect(res.body).toMatchObject({
          error_code: 'unsupported_media_type',
          detail: 'A webhook body must be application/json',
        });
    }
    // Nothing of it was believed: the API was not asked about the session.
    expect(suite.sb.requestCount('GET /v1/verify/:id')).toBe(gets);
  });

  it('an app created without rawBody is told at boot, before any webhook, naming rawBody and the route', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { rawBody: false, logger, receiveWebhooks: false });
    const atBoot = logger.at('warn').filter((m) => m.includes('rawBody'));
    expect(atBoot).toHaveLength(1);
    expect(atBoot[0]).toContain('POST /verification/webhooks');
    expect(atBoot[0]).toContain('NestFactory.create(AppModule, { rawBody: true })');
    expect(atBoot[0]).toContain('until then every webhook is answered 503 service_unavailable');
    expect(logger.at('error')).toEqual([]);
    expect(suite.sb.webhookLog()).toEqual([]);
  });

  it('an app created with rawBody, or with webhooks off, boots without that warning', async () => {
    const withRaw = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { logger: withRaw, receiveWebhooks: false });
    expect(withRaw.at('warn').filter((m) => m.includes('rawBody'))).toEqual([]);
    await suite.host.close();
    const off = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, {
      rawBody: false,
      logger: off,
      receiveWebhooks: false,
      module: { webhooks: { enabled: false } },
    });
    expect(off.at('warn').filter((m) => m.includes('rawBody'))).toEqual([]);
  });

  it("a host's own parsers that do not read application/json: no rawBody warning at boot, a delivery is a 415", async () => {
    // Express: the host's JSON parser for its own type only. Fastify: Fastify's catch-all, the body left unread.
    const parsers = (app: INestApplication): void => {
      if (platform === 'express')
        (app as NestExpressApplication).useBodyParser('json', { type: 'application/vnd.host+json' });
      else {
        const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
        fastify.removeAllContentTypeParsers();
        fastify.addContentTypeParser('*', (_request, _payload, done) => done(null));
      }
    };
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { parsers, logger, receiveWebhooks: false });
    expect(logger.at('warn').filter((m) => m.includes('rawBody'))).toEqual([]);
    const res = await postWebhook(
      route(),
      signed(suite.sb.demoAccount.webhookSecret, payloadFor('verification.verified', 'req-x'), {
        timestampSeconds: ts(),
      }),
    );
    expect(res.status).toBe(415);
    expect(res.body.detail).toBe('This app does not read application/json bodies; send application/json');
    expect(logger.at('error')).toEqual([]);
  });

  it('an app really created without rawBody still answers JSON with 503 and the error naming the fix', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { rawBody: false, logger, receiveWebhooks: false });
    const merge = await postWebhook(route(), {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{}',
    });
    expect(merge.status).toBe(415);
    expect(logger.at('error')).toEqual([]);
    const json = await postWebhook(
      route(),
      signed(suite.sb.demoAccount.webhookSecret, payloadFor('verification.verified', 'req-x'), {
        timestampSeconds: ts(),
      }),
    );
    expect(json.status).toBe(503);
    expect(json.body).toMatchObject({
      error_code: 'service_unavailable',
      detail: 'The webhook receiver is misconfigured (raw request body unavailable); retry later',
    });
    expect(logger.at('error')).toHaveLength(1);
    expect(logger.at('error')[0]).toContain('rawBody: true');
  });

  it('without rawBody, a delivery with no body is read as empty (400), one sent in chunks is a 503 with a reminder', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { rawBody: false, logger, receiveWebhooks: false });
    const secret = suite.sb.demoAccount.webhookSecret;
    // Content-Length: 0: there are no bytes to keep, so the missing raw body changes nothing.
    const empty = await postWebhook(route(), signed(secret, '', { timestampSeconds: ts() }));
    expect(empty.status).toBe(400);
    // Fastify refuses an empty JSON body itself, before the route (its own 400).
    if (platform === 'express') expect(empty.body.detail).toBe('The webhook body is not JSON');
    expect(logger.at('error')).toEqual([]);
    // Transfer-Encoding: chunked, no Content-Length: a body was read and its bytes are gone.
    const sendChunked = async () => {
      const delivery = signed(secret, payloadFor('verification.verified', 'req-x'), {
        timestampSeconds: ts(),
      });
      const res = await fetch(route(), {
        method: 'POST',
        headers: delivery.headers,
        body: new Blob([delivery.body]).stream(),
        duplex: 'half',
      } as RequestInit);
      return res.status;
    };
    expect(await sendChunked()).toBe(503);
    expect(logger.at('error')).toHaveLength(1);
    // The second one is a reminder at warn, not another error.
    expect(await sendChunked()).toBe(503);
    expect(logger.at('error')).toHaveLength(1);
    expect(logger.at('warn')).toContain(
      'webhook answered 503: raw body unavailable (create the app with { rawBody: true })',
    );
  });
});

describe("webhook boot check, a Fastify host's own JSON parser", () => {
  const suite = sandboxSuite();

  type Style = 'answering by promise' | 'calling back with no error (undefined)';
  const ownJsonParser =
    (style: Style, keepRaw: boolean) =>
    (app: INestApplication): void => {
      const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
      fastify.removeContentTypeParser('application/json');
      const parse = (request: FastifyRequest, body: string | Buffer): unknown => {
        if (keepRaw) (request as FastifyRequest & { rawBody?: Buffer }).rawBody = body as Buffer;
        return JSON.parse(body.toString('utf8'));
      };
      if (style === 'answering by promise')
        fastify.addContentTypeParser(
          'application/json',
          { parseAs: 'buffer' },
          async (request: FastifyRequest, body: string | Buffer) => parse(request, body),
        );
      else
        fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) =>
          done(undefined as unknown as null, parse(request, body)),
        );
    };

  const deliver = async (): Promise<number> => {
    const s = await startSession(suite.host!, suite.sb, 'sms');
    const res = await postWebhook(
      `${suite.host!.url}/verification/webhooks`,
      signed(suite.sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
        timestampSeconds: Math.floor(suite.sb.now() / 1000),
      }),
    );
    return res.status;
  };

  it.each<Style>(['answering by promise', 'calling back with no error (undefined)'])(
    '%s, dropping the raw bytes: the rawBody warning at boot, and a signed delivery is the 503 it names',
    async (style) => {
      const logger = new CapturingLogger();
      suite.host = await startHost('fastify', suite.sb, { parsers: ownJsonParser(style, false), logger });
      expect(logger.at('warn').filter((m) => m.includes('rawBody'))).toHaveLength(1);
      expect(await deliver()).toBe(503);
    },
  );

  it.each<Style>(['answering by promise', 'calling back with no error (undefined)'])(
    '%s, keeping them (request.rawBody): no warning, and a signed delivery is accepted',
    async (style) => {
      const logger = new CapturingLogger();
      suite.host = await startHost('fastify', suite.sb, { parsers: ownJsonParser(style, true), logger });
      expect(logger.at('warn').filter((m) => m.includes('rawBody'))).toEqual([]);
      expect(await deliver()).toBe(200);
    },
  );
});

describe('webhook boot check, an application context (no HTTP server)', () => {
  const suite = sandboxSuite();

  // NestFactory's application context (a worker) has a null HTTP adapter; a testing module initialised
  // without an app has none at all.
  it.each(['NestFactory.createApplicationContext', 'Test.createTestingModule(...).init()'])(
    '%s boots with webhooks on and says nothing about rawBody: there is no route to serve',
    async (shape) => {
      const logger = new CapturingLogger();
      @Module({
        imports: [EventEmitterModule.forRoot(), VerificationModule.forRoot(moduleOptions(suite.sb))],
      })
      class WorkerModule {}
      const context =
        shape === 'NestFactory.createApplicationContext'
          ? await NestFactory.createApplicationContext(WorkerModule, { logger })
          : await (
              await Test.createTestingModule({ imports: [WorkerModule] })
                .setLogger(logger)
                .compile()
            ).init();
      try {
        expect(logger.at('warn').filter((m) => m.includes('rawBody'))).toEqual([]);
        expect(logger.at('error')).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );
});
