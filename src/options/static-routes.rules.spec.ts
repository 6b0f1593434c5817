import { describe, expect, it } from '@jest/globals';
import { thrown } from '../../test/support/option-refusals.js';
import { checkStaticRoutes } from './static-routes.rules.js';

describe("checkStaticRoutes: forRootAsync's declaration beside its factory", () => {
  it('takes routes: { prefix, enabled }, webhooks: { enabled, path, decorators } and name', () => {
    const decorators: ClassDecorator[] = [() => undefined];
    expect(() =>
      checkStaticRoutes({
        routes: { prefix: 'v1/verify', enabled: false },
        webhooks: { enabled: true, path: 'hooks', decorators },
        name: 'shop',
      }),
    ).not.toThrow();
    expect(() => checkStaticRoutes({})).not.toThrow();
  });

  it.each([
    [{ routes: { prefix: 'v', enabled: true, guard: 1 } }, 'routes.guard', 'is not an option'],
    [
      { webhooks: { decorator: [] } },
      'webhooks.decorator',
      'is not an option (did you mean "webhooks.decorators"?)',
    ],
  ])('refuses a key that is no option, naming it (and the nearest): %j', (declaration, field, problem) => {
    const error = thrown(() => checkStaticRoutes(declaration));
    expect(error.field).toBe(field);
    expect(error.message).toBe(`VerificationModule: option "${field}" ${problem}`);
  });

  it("leaves another option of the group to the factory's options (one object shared with the factory)", () => {
    expect(() =>
      checkStaticRoutes({
        routes: { prefix: 'api', allowedOrigins: ['https://shop.example'] },
        webhooks: { enabled: true, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
      }),
    ).not.toThrow();
  });

  it.each([
    [{ routes: 'v1' }, 'routes'],
    [{ routes: { prefix: 'a b' } }, 'routes.prefix'],
    [{ routes: { enabled: 'yes' } }, 'routes.enabled'],
    [{ webhooks: { enabled: 1 } }, 'webhooks.enabled'],
    [{ webhooks: { path: '' } }, 'webhooks.path'],
    [{ webhooks: { decorators: new Set() } }, 'webhooks.decorators'],
    [{ name: 'A B' }, 'name'],
  ])('holds each value to the module rule of its path: %j', (declaration, field) => {
    expect(thrown(() => checkStaticRoutes(declaration)).field).toBe(field);
  });

  it("leaves each decorator to the import's own check (named there by its index)", () => {
    expect(() => checkStaticRoutes({ webhooks: { decorators: ['x'] } })).not.toThrow();
  });
});
