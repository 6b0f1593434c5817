import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { VerificationClientError } from '../verification.errors.js';

/**
 * The client routes' own ValidationPipe (never installed globally): unknown or extra fields,
 * wrong types and non-object bodies are a 400 `validation_error` listing the fields.
 */
export function createVerificationValidationPipe(): ValidationPipe {
  return new ValidationPipe({
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
