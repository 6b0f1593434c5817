import { ApiProperty } from './openapi-decorators.js';
import { IsString, MaxLength } from 'class-validator';
import { VERIFICATION_METHODS } from '../core/verification-method.js';

export class StartVerificationDto {
  /** Every field of the body (see BodyFields). */
  static readonly fields = ['phone_number', 'method'] as const;

  @ApiProperty({
    description: 'Phone number as typed; normalised to E.164 (default country applies)',
    example: '+79123456789',
    maxLength: 64,
  })
  @IsString()
  @MaxLength(64)
  phone_number!: string;

  @ApiProperty({
    description: 'One of the methods `GET /methods` offers',
    example: 'sms',
    enum: [...VERIFICATION_METHODS],
  })
  @IsString()
  @MaxLength(40)
  method!: string;
}
