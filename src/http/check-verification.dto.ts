import { ApiProperty } from './openapi-decorators.js';
import { IsString, Matches, MaxLength } from 'class-validator';
import { JourneyTokenField } from './journey-token.field.js';
import { CODE_PATTERN, CODE_RULE } from '../core/verification-code.js';

export class CheckVerificationDto {
  /** Every field of the body (see BodyFields). */
  static readonly fields = ['verification_id', 'code', 'journey_token'] as const;

  @ApiProperty({ description: 'The opaque handle returned by start' })
  @MaxLength(256)
  @IsString()
  verification_id!: string;

  @ApiProperty({ description: CODE_RULE, example: '1234', pattern: CODE_PATTERN.source })
  @Matches(CODE_PATTERN, { message: `code must be ${CODE_RULE}` })
  @IsString()
  code!: string;

  @JourneyTokenField()
  journey_token?: string;
}
