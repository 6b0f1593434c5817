import { ApiProperty, ApiPropertyOptional } from './openapi-decorators.js';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { JourneyTokenField } from './journey-token.field.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';

export class SwitchVerificationDto {
  /** Every field of the body (see BodyFields). */
  static readonly fields = ['verification_id', 'method', 'journey_token'] as const;

  @ApiProperty({ description: 'The opaque handle returned by start (it stays the same)' })
  @MaxLength(256)
  @IsString()
  verification_id!: string;

  @ApiPropertyOptional({
    description:
      "One of the status answer's `switch_methods`, or `auto` (the default when left out): the policy's next method",
    example: 'auto',
    enum: ['auto', ...VERIFICATION_METHODS],
  })
  @IsOptional()
  @MaxLength(40)
  @IsString()
  method?: string;

  @JourneyTokenField()
  journey_token?: string;
}
