import { ApiProperty } from './openapi-decorators.js';
import { IsString, MaxLength } from 'class-validator';

export class CancelVerificationDto {
  /** Every field of the body (see BodyFields). */
  static readonly fields = ['verification_id'] as const;

  @ApiProperty({ description: 'The opaque handle returned by start' })
  @IsString()
  @MaxLength(256)
  verification_id!: string;
}
