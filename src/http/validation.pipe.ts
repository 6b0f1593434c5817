import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { VerificationClientError } from '../core/verification.errors.js';

/** A body DTO lists its fields (all strings): anything else in a body is refused before a deep walk. */
export interface BodyFields {
  readonly fields: readonly string[];
}

/** A body route's class: its fields and their class-validator rules. */
export type BodyDto = (new () => object) & BodyFields;

/**
 * A client route's own ValidationPipe for its body class (never installed globally): non-object bodies, unknown or
 * extra fields (prototype-pollution keys among them) and non-string values are a 400
 * `validation_error` after a shallow look at the body's own keys, before class-validator and
 * class-transformer walk it (a deeply nested unknown field would overflow their copy's stack).
 */
export class VerificationValidationPipe extends ValidationPipe {
  constructor(private readonly dto: BodyDto) {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      // One reason per field: a field left out is "must be a string", not also "too long".
      stopAtFirstError: true,
      transform: false,
      validationError: { target: false, value: false },
      exceptionFactory: (errors: ValidationError[]) => {
        const list = flatten(errors).slice(0, 10);
        return new VerificationClientError(
          'validation_error',
          list[0]?.message ?? 'The request body is not valid',
          {
            errors: list,
          },
        );
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'body') return super.transform(value, metadata);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new VerificationClientError('validation_error', 'The request body must be a JSON object', {
        errors: [{ field: null, message: 'The request body must be a JSON object' }],
      });
    assertShallowFields(value, this.dto.fields);
    // The declared type is the route's `Readonly<dto>` (design type Object): the class is the route's.
    return super.transform(value, { ...metadata, metatype: this.dto });
  }
}

/** Own keys only among `fields`, each value a string; stops at the first offence (no walk of the rest). */
function assertShallowFields(body: object, fields: readonly string[]): void {
  for (const key in body) {
    if (!Object.hasOwn(body, key)) continue;
    const field = key.slice(0, 64);
    if (!fields.includes(key)) throw fieldError(field, `property ${field} should not exist`);
    if (typeof (body as Record<string, unknown>)[key] !== 'string')
      throw fieldError(field, `${field} must be a string`);
  }
}

function fieldError(field: string, message: string): VerificationClientError {
  return new VerificationClientError('validation_error', message, { errors: [{ field, message }] });
}

function flatten(errors: ValidationError[], parent = ''): { field: string | null; message: string }[] {
  const out: { field: string | null; message: string }[] = [];
  for (const error of errors) {
    const field = error.property ? `${parent}${String(error.property).slice(0, 64)}` : null;
    for (const message of Object.values(error.constraints ?? {}))
      out.push({ field, message: message.slice(0, 200) });
    if (error.children?.length) out.push(...flatten(error.children, `${field ?? ''}.`));
  }
  if (out.length === 0 && errors.length > 0)
    out.push({ field: null, message: 'The request body is not valid' });
  return out;
}
