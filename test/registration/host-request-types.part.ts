/**
 * Type-level test (compiled by `npm run typecheck`, which covers test/): a host types `owner(req)`
 * and `limits.key(req)` with its platform's request type and writes no cast, in forRoot and in
 * forRootAsync. Were the options' request parameter a plain `unknown` function parameter, this file
 * would not compile. At run time it checks that the functions are kept as given.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import type { FastifyRequest } from 'fastify';
import { VerificationModule } from '../../src/module/verification.module.js';
import {
  resolveVerificationOptions,
  type LimitsOptions,
  type VerificationModuleOptions,
} from '../../src/options/verification.options.js';

/** The user an auth guard puts on the request. */
interface AuthUser {
  id: string;
}
/**
 * Express's `Request` extends Node's `IncomingMessage` (its types, @types/express, are not installed
 * here): the same shape, with the user a passport-style guard sets.
 */
interface ExpressRequest extends IncomingMessage {
  user?: AuthUser;
}
type AuthedFastifyRequest = FastifyRequest & { user?: AuthUser };

const api = { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' };

const expressOptions: VerificationModuleOptions = {
  api,
  owner: (req: ExpressRequest) => req.user?.id,
  limits: { key: (req: ExpressRequest) => req.user?.id ?? req.socket?.remoteAddress },
};

const fastifyLimits: LimitsOptions = { key: (req: AuthedFastifyRequest) => req.user?.id ?? req.ip };

// Both module entry points take them as written.
VerificationModule.forRoot({ api, owner: async (req: AuthedFastifyRequest) => req.user?.id });
VerificationModule.forRootAsync({
  useFactory: () => ({
    api,
    owner: (req: AuthedFastifyRequest) => req.user?.id,
    limits: fastifyLimits,
  }),
});

describe("owner(req) and limits.key(req) take the host's request type", () => {
  it('an Express-typed owner and key are kept and called with the request', () => {
    const resolved = resolveVerificationOptions(expressOptions);
    const request = { user: { id: 'user-7' } };
    expect(resolved.owner?.(request)).toBe('user-7');
    expect(resolved.limits.key?.(request)).toBe('user-7');
  });

  it('a Fastify-typed key is kept and called with the request', () => {
    const resolved = resolveVerificationOptions({ api, limits: fastifyLimits });
    expect(resolved.limits.key?.({ ip: '203.0.113.9' })).toBe('203.0.113.9');
  });
});
