import { ApiProperty } from './openapi-decorators.js';
import { IsString, MaxLength } from 'class-validator';
import { JourneyTokenField } from './journey-token.field.js';

export class CancelVerificationDto {
  /** Every field of the body (see BodyFields). */
  static readonly fields = ['verification_id', 'journey_token'] as const;

  @ApiProperty({ description: 'The opaque handle returned by start' })
  @MaxLength(256)
  @IsString()
  verification_id!: string;

  @JourneyTokenField()
  journey_token?: string;
}
