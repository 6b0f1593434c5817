/**
 * The floor of a NestJS platform for benchmark 1: a Nest app (Express or Fastify) whose one controller
 * answers `GET /status/:id` with the upstream's `GET /v1/verify/:id`, fetched over a keep-alive
 * node:http agent and parsed. No module, no validation, no store: what any Nest route doing this hop
 * costs, so the table can tell the platform's share from the module's.
 */
import 'reflect-metadata';
import http from 'node:http';
import { Controller, Get, Module, Param, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { forkArgument, serveCommands } from '../lib/child-process.js';
import type { Platform } from '../lib/host-app.js';

export interface PlatformFloorArgs {
  platform: Platform;
  upstream: string;
  apiKey: string;
  apiSecret: string;
}

const { platform, upstream, apiKey, apiSecret } = forkArgument<PlatformFloorArgs>();
const target = new URL(upstream);
const agent = new http.Agent({ keepAlive: true });
const authorization = `Basic ${Buffer.from(`${apiKey}:${apiSecret}`).toString('base64')}`;

function fetchSession(id: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: `/v1/verify/${encodeURIComponent(id)}`,
        agent,
        headers: { authorization, accept: 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

@Controller()
class FloorController {
  @Get('status/:id')
  status(@Param('id') id: string): Promise<unknown> {
    return fetchSession(id);
  }
}

@Module({ controllers: [FloorController] })
class FloorModule {}

const app: INestApplication =
  platform === 'fastify'
    ? await NestFactory.create(FloorModule, new FastifyAdapter(), { logger: false })
    : await NestFactory.create(FloorModule, { logger: false });
await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address() as { port: number };
serveCommands({ url: `http://127.0.0.1:${port}` }, {}, async () => {
  await app.close();
  agent.destroy();
});
