/**
 * The OpenAPI decorators of the module's routes and bodies, with `@nestjs/swagger` as an optional
 * peer. Each decorator here is recorded where it is written (with the same arguments as swagger's
 * one of the same name) and applied through swagger's own decorators when the module boots and
 * swagger is installed (`loadOpenApiDocs`, awaited by the resolved options' provider, so before any
 * host can build its document). Without swagger nothing is applied and nothing is imported: a host
 * without it boots.
 *
 * Swagger is loaded with a dynamic import(), like the other optional peers: no top-level await, so
 * the package stays loadable with require() from CommonJS and under jest's ESM mode.
 */

type DecoratorTarget = object;
/** A decorator usable on a class, a method or a property, as swagger's are. */
export type OpenApiDecorator = (
  target: DecoratorTarget,
  key?: string | symbol,
  descriptor?: PropertyDescriptor,
) => void;

/** The swagger decorator factories the package uses (the names of `@nestjs/swagger`'s exports). */
type SwaggerDecoratorName =
  | 'ApiProperty'
  | 'ApiPropertyOptional'
  | 'ApiTags'
  | 'ApiProduces'
  | 'ApiConsumes'
  | 'ApiOperation'
  | 'ApiBody'
  | 'ApiParam'
  | 'ApiQuery'
  | 'ApiResponse'
  | 'ApiExtraModels'
  | 'ApiExcludeController';

interface RecordedDecorator {
  name: SwaggerDecoratorName;
  args: unknown[];
  target: DecoratorTarget;
  key?: string | symbol;
  descriptor?: PropertyDescriptor;
}

type SwaggerExports = Partial<Record<SwaggerDecoratorName, (...args: unknown[]) => OpenApiDecorator>>;

const recorded: RecordedDecorator[] = [];
let swagger: Promise<SwaggerExports | undefined> | undefined;

function deferred(name: SwaggerDecoratorName) {
  return (...args: unknown[]): OpenApiDecorator =>
    (target, key, descriptor) => {
      recorded.push({ name, args, target, key, descriptor });
    };
}

export const ApiProperty = deferred('ApiProperty');
export const ApiPropertyOptional = deferred('ApiPropertyOptional');
export const ApiTags = deferred('ApiTags');
export const ApiProduces = deferred('ApiProduces');
export const ApiConsumes = deferred('ApiConsumes');
export const ApiOperation = deferred('ApiOperation');
export const ApiBody = deferred('ApiBody');
export const ApiParam = deferred('ApiParam');
export const ApiQuery = deferred('ApiQuery');
export const ApiResponse = deferred('ApiResponse');
export const ApiExtraModels = deferred('ApiExtraModels');
export const ApiExcludeController = deferred('ApiExcludeController');

/**
 * Applies every recorded decorator through `@nestjs/swagger` when it is installed (in the order
 * they were written, as TypeScript would have); a no-op without it (false). Safe to call for every module
 * registration: each decorator is applied once.
 */
export async function loadOpenApiDocs(): Promise<boolean> {
  swagger ??= import('@nestjs/swagger').then(
    (loaded) => loaded as unknown as SwaggerExports,
    () => undefined,
  );
  const exports = await swagger;
  if (!exports) return false;
  for (const decorator of recorded.splice(0)) {
    const apply = exports[decorator.name]?.(...decorator.args);
    if (!apply) continue;
    if (decorator.key === undefined) apply(decorator.target);
    else apply(decorator.target, decorator.key, decorator.descriptor);
  }
  return true;
}
