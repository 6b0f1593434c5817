import type { Type } from '@nestjs/common';
import type { ModulesContainer } from '@nestjs/core';
import { VerificationOptionsError } from '../core/option-rules.js';

/** The registration and path each of the module's controller classes serves (one class per registration). */
const SERVED = new WeakMap<Type, { registration: string; path: string }>();

/** Records what a registration's controller serves, for `assertDistinctRoutes`. */
export function servedBy<T extends Type>(controller: T, name: string | undefined, path: string): T {
  SERVED.set(controller, { registration: label(name), path: path.replace(/^\/+|\/+$/g, '') });
  return controller;
}

/**
 * Two registrations serving one path would meet the platform's own error at the first route (Fastify's
 * "route already declared", naming neither) or, on Express, the first registration would answer for both.
 * The boot fails instead, naming both registrations and the option to change.
 */
export function assertDistinctRoutes(modules: ModulesContainer): void {
  const seen = new Map<string, string>();
  for (const module of modules.values())
    for (const { metatype } of module.controllers.values()) {
      const served = metatype ? SERVED.get(metatype as Type) : undefined;
      if (served === undefined) continue;
      const other = seen.get(served.path);
      if (other !== undefined && other !== served.registration)
        throw new VerificationOptionsError(
          'routes.prefix',
          `gives ${other} and ${served.registration} the same path "/${served.path}": give each registration its own routes.prefix (and webhooks.path)`,
        );
      seen.set(served.path, served.registration);
    }
}

function label(name: string | undefined): string {
  return name === undefined ? 'the unnamed registration' : `registration "${name}"`;
}
