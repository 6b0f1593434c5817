import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { VerificationSandbox } from '../../src/testing/index.js';
import { createTestApp, PLATFORMS, type TestApp } from '../support/verification-app.js';

describe.each(PLATFORMS)('OpenAPI metadata of the client routes (%s)', (platform) => {
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
    host = await createTestApp({
      platform,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        routes: { prefix: 'phone' },
      },
    });
  });
  afterAll(async () => {
    await host?.close();
    await sb?.close();
  });

  it("shows the four routes, their bodies and responses in the host's Swagger document", () => {
    const document = SwaggerModule.createDocument(host.app, new DocumentBuilder().setTitle('host').build());
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/phone/start',
        '/phone/check',
        '/phone/status/{verification_id}',
        '/phone/methods',
      ]),
    );
    const schemas = document.components?.schemas ?? {};
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(['StartVerificationDto', 'CheckVerificationDto', 'StartVerificationResponse']),
    );
    const startBody = schemas.StartVerificationDto as {
      required?: string[];
      properties: Record<string, unknown>;
    };
    expect(startBody.required).toEqual(expect.arrayContaining(['phone_number', 'method']));
    expect(document.paths['/phone/start'].post?.responses['201']).toBeDefined();
    const startResponse = JSON.stringify(schemas.StartVerificationResponse);
    expect(startResponse).not.toMatch(/cost|request_id/);
  });
});
