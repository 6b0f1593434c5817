import { describe, expect, it } from '@jest/globals';
import type { ModulesContainer } from '@nestjs/core';
import { VerificationOptionsError } from '../core/option-rules.js';
import { assertDistinctRoutes, servedBy } from './distinct-routes.js';

/** Nest's container as the rule reads it: modules, each with its controllers' classes. */
function container(...modules: (new () => unknown)[][]): ModulesContainer {
  return new Map(
    modules.map((controllers, i) => [
      `m${i}`,
      { controllers: new Map(controllers.map((metatype) => [metatype, { metatype }])) },
    ]),
  ) as unknown as ModulesContainer;
}
const controller = () => class {};

describe('assertDistinctRoutes', () => {
  it('two registrations on one path, however its slashes are written, fail naming both', () => {
    const north = servedBy(controller(), 'north', '/shared/verification/');
    const south = servedBy(controller(), 'south', 'shared/verification');
    expect(() => assertDistinctRoutes(container([north], [south]))).toThrow(
      /registration "north" and registration "south" the same path "\/shared\/verification"/,
    );
  });

  it('slashes repeated at either end of a path are read as one path', () => {
    const north = servedBy(controller(), 'north', '//shared//');
    const south = servedBy(controller(), 'south', 'shared');
    expect(() => assertDistinctRoutes(container([north], [south]))).toThrow(/the same path "\/shared"/);
  });

  it('the error names the option to change (routes.prefix)', () => {
    const north = servedBy(controller(), 'north', 'verification');
    const south = servedBy(controller(), 'south', 'verification');
    const error = (() => {
      try {
        assertDistinctRoutes(container([north], [south]));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(VerificationOptionsError);
    expect((error as VerificationOptionsError).field).toBe('routes.prefix');
  });

  it('the unnamed registration is named as such', () => {
    const unnamed = servedBy(controller(), undefined, 'verification');
    const north = servedBy(controller(), 'north', 'verification');
    expect(() => assertDistinctRoutes(container([unnamed], [north]))).toThrow(
      /the unnamed registration and registration "north"/,
    );
  });

  it("one registration's own controllers on one path (client routes and webhook) boot", () => {
    const routes = servedBy(controller(), 'north', 'verification');
    const webhook = servedBy(controller(), 'north', '/verification');
    expect(() => assertDistinctRoutes(container([routes, webhook]))).not.toThrow();
  });

  it('paths that differ, and controllers of the host, pass', () => {
    const north = servedBy(controller(), 'north', 'north/verification');
    const south = servedBy(controller(), 'south', 'south/verification');
    expect(() => assertDistinctRoutes(container([north, controller()], [south]))).not.toThrow();
  });
});
