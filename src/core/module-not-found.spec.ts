import { describe, expect, it } from '@jest/globals';
import { isModuleNotFound } from './module-not-found.js';

describe('isModuleNotFound (an optional peer not installed)', () => {
  it('is true for what import() and require() throw for a package that is not there', async () => {
    const imported = await import('not-an-installed-package-' + 'xyz').catch((e: unknown) => e);
    expect(isModuleNotFound(imported)).toBe(true);
    expect(isModuleNotFound(Object.assign(new Error('x'), { code: 'MODULE_NOT_FOUND' }))).toBe(true);
    // Node's own code for an ES module import (jest's resolver throws the CommonJS one).
    expect(isModuleNotFound(Object.assign(new Error('x'), { code: 'ERR_MODULE_NOT_FOUND' }))).toBe(true);
  });

  it.each([
    ['a failure inside the package', new SyntaxError('Unexpected token')],
    ['another code', Object.assign(new Error('x'), { code: 'ERR_REQUIRE_ESM' })],
    ['null', null],
    ['undefined', undefined],
    ['a text', 'ERR_MODULE_NOT_FOUND'],
  ])('is false for %s', (_, error) => {
    expect(isModuleNotFound(error)).toBe(false);
  });
});
