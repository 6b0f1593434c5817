import { describe, expect, it } from '@jest/globals';
import type { CanActivate } from '@nestjs/common';
import { createVerificationOpsController } from './verification-ops.controller.js';

class HostGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

describe('createVerificationOpsController: the page boots only behind a guard, on a route path', () => {
  it.each([
    ['a guard class', { path: 'admin/verification', guards: [HostGuard] }],
    ['a guard instance', { path: '/admin/verification/', guards: [new HostGuard()] }],
    ['dots and tildes inside a segment', { path: 'ops.v2/~team/.well_known-x', guards: [HostGuard] }],
  ])('%s is a controller', (_name, options) => {
    expect(typeof createVerificationOpsController(options)).toBe('function');
  });

  it.each([
    ['no options', undefined, 'path'],
    ['a path that is a number', { path: 42, guards: [HostGuard] }, 'path'],
    ['a path with a space', { path: 'admin verification', guards: [HostGuard] }, 'path'],
    ['a path with an empty segment', { path: 'admin//verification', guards: [HostGuard] }, 'path'],
    ['a path ending in .', { path: 'admin/.', guards: [HostGuard] }, 'path'],
    ['a path through ..', { path: 'admin/../secrets', guards: [HostGuard] }, 'path'],
    ['no guard', { path: 'admin', guards: [] }, 'guards'],
    ['a null guard', { path: 'admin', guards: [null] }, 'guards[0]'],
    [
      'a guard whose canActivate is no function',
      { path: 'admin', guards: [HostGuard, { canActivate: 'yes' }] },
      'guards[1]',
    ],
  ])('%s fails the boot, naming the field', (_name, options, field) => {
    expect(() => createVerificationOpsController(options as never)).toThrow(
      expect.objectContaining({
        field,
        message: expect.stringMatching(
          new RegExp(`^VerificationOpsPage: option "${field.replace(/[[\]]/g, '\\$&')}" must`),
        ),
      }),
    );
  });
});
