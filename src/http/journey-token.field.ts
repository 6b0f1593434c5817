import { applyDecorators } from '@nestjs/common';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { MAX_JOURNEY_TOKEN_CHARS } from '../core/verification-handle.codec.js';
import { ApiPropertyOptional } from './openapi-decorators.js';

/**
 * The optional `journey_token` body field of check, switch and cancel: one declaration, so its rule
 * and its OpenAPI description cannot differ between the routes.
 */
export function JourneyTokenField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      description:
        'The last `journey_token` an answer gave (after a switch): lets a server that lost the journey (a restart) follow its current step',
    }),
    IsOptional(),
    IsString(),
    MaxLength(MAX_JOURNEY_TOKEN_CHARS),
  );
}
