import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import type { INestApplication, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import type { TargetChoice } from './sandbox-host.module.js';
import { VerificationTarget, type SampleMode } from './verification-target.js';

/** The page: plain HTML, CSS and ES modules, served as they are (works offline). */
const PUBLIC_DIR = fileURLToPath(new URL('../public', import.meta.url));
/**
 * The package's element and the browser client it is built on, as built (`npm run build`), served to
 * the page as ES modules (the element imports `../client/index.js`).
 */
const CLIENT_DIR = fileURLToPath(new URL('../../dist/client', import.meta.url));
const ELEMENT_DIR = fileURLToPath(new URL('../../dist/element', import.meta.url));

/** Everything the page loads comes from this app; no CDN, no inline script. */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface SampleAppOptions {
  /** 0 = a free port. Default 3000. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Nest's log levels, or false for none. */
  logger?: LogLevel[] | false;
  /**
   * `from-environment` (default): the real API when the VERIFICATION_* variables are set, else the
   * embedded sandbox. `sandbox`: always the sandbox, whatever the environment or `.env` says (tests).
   */
  target?: TargetChoice;
}

export interface SampleApp {
  app: INestApplication;
  /** `http://127.0.0.1:PORT`. */
  url: string;
  mode: SampleMode;
  /** In sandbox mode, the embedded sandbox's address (its control API plays the user's phone). */
  sandboxUrl: string | undefined;
  close(): Promise<void>;
}

/** Creates the sample host app, serves the page and, in sandbox mode, registers the webhook URL. */
export async function bootstrapSampleApp(options: SampleAppOptions = {}): Promise<SampleApp> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(options.target), {
    // Webhook signatures are checked over the raw bytes of the request.
    rawBody: true,
    // The page's live event stream (SSE) must not keep a shutdown waiting.
    forceCloseConnections: true,
    // A configuration mistake is thrown to the caller (main prints it), not a process.abort().
    abortOnError: false,
    logger: options.logger ?? ['log', 'warn', 'error', 'fatal'],
  });
  app.use((_req: unknown, res: { setHeader(name: string, value: string): void }, next: () => void) => {
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.useStaticAssets(PUBLIC_DIR, { index: 'index.html' });
  app.useStaticAssets(CLIENT_DIR, { prefix: '/client/' });
  app.useStaticAssets(ELEMENT_DIR, { prefix: '/element/' });
  await app.listen(options.port ?? 3000, options.host ?? '127.0.0.1');

  const { port } = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  const target = app.get(VerificationTarget);
  const sandbox = target.sandbox;
  // The sandbox signs and sends its events to the module's webhook route, like the real service does
  // to the URL set in its dashboard.
  if (sandbox)
    await sandbox.updateAccount(sandbox.demoAccount.apiKey, { webhookUrl: `${url}/verification/webhooks` });
  return { app, url, mode: target.mode, sandboxUrl: sandbox?.url, close: () => app.close() };
}
