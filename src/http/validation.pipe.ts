import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { VerificationClientError } from '../verification.errors.js';

/** Keys that name something every object inherits (`__proto__`, `constructor`, `valueOf`, …), or `prototype`. */
const isPollutingKey = (key: string): boolean => key === 'prototype' || key in Object.prototype;

/**
 * The client routes' own ValidationPipe (never installed globally): unknown or extra fields,
 * wrong types, non-object bodies and prototype-pollution keys are a 400 `validation_error`
 * listing the fields, before class-transformer ever sees them.
 */
export class VerificationValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
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
    if (metadata.type === 'body') {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new VerificationClientError('validation_error', 'The request body must be a JSON object', {
          errors: [{ field: null, message: 'The request body must be a JSON object' }],
        });
      const polluting = Object.keys(value).find(isPollutingKey);
      if (polluting !== undefined)
        throw new VerificationClientError('validation_error', `property ${polluting} should not exist`, {
          errors: [{ field: polluting, message: `property ${polluting} should not exist` }],
        });
    }
    return super.transform(value, metadata);
  }
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
