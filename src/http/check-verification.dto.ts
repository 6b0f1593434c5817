import { ApiProperty } from './openapi-decorators.js';
import { IsString, Matches, MaxLength } from 'class-validator';

export class CheckVerificationDto {
  /** Every field of the body (see BodyFields). */
  static readonly fields = ['verification_id', 'code'] as const;

  @ApiProperty({ description: 'The opaque handle returned by start' })
  @IsString()
  @MaxLength(256)
  verification_id!: string;

  @ApiProperty({ description: '4 to 8 digits', example: '1234', pattern: '^\\d{4,8}$' })
  @IsString()
  @Matches(/^\d{4,8}$/, { message: 'code must be 4 to 8 digits' })
  code!: string;
}
