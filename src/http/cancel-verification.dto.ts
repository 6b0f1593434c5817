import { ApiProperty, ApiPropertyOptional } from './openapi-decorators.js';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { MAX_JOURNEY_TOKEN_CHARS } from '../core/verification-handle.codec.js';

export class CancelVerificationDto {
  /** Every field of the body (see BodyFields). */
  static readonly fields = ['verification_id', 'journey_token'] as const;

  @ApiProperty({ description: 'The opaque handle returned by start' })
  @IsString()
  @MaxLength(256)
  verification_id!: string;

  @ApiPropertyOptional({
    description:
      'The last `journey_token` an answer gave (after a switch): lets a server that lost the journey (a restart) follow its current step',
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_JOURNEY_TOKEN_CHARS)
  journey_token?: string;
}
