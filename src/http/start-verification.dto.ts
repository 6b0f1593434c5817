import { ApiProperty, ApiPropertyOptional } from './openapi-decorators.js';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { DEVICE_HINTS } from '../core/journey.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';

/** In each body class a field's type check is its last decorator: they register bottom-up, so a field left out is told as not a string first. */
export class StartVerificationDto {
  /** Every field of the body (see BodyFields). */
  static readonly fields = ['phone_number', 'method', 'device', 'purpose'] as const;

  @ApiProperty({
    description: 'Phone number as typed; normalised to E.164 (default country applies)',
    example: '+79123456789',
    maxLength: 64,
  })
  @MaxLength(64)
  @IsString()
  phone_number!: string;

  @ApiPropertyOptional({
    description:
      'One of the methods `GET /methods` offers, or `auto` (the default when left out): the orchestration policy picks it',
    example: 'auto',
    enum: ['auto', ...VERIFICATION_METHODS],
  })
  @IsOptional()
  @MaxLength(40)
  @IsString()
  method?: string;

  @ApiPropertyOptional({
    description: "The user's device, for the policy to leave out methods that do not suit it",
    enum: [...DEVICE_HINTS],
  })
  @IsOptional()
  @IsIn([...DEVICE_HINTS], { message: 'device must be "mobile" or "desktop"' })
  device?: string;

  @ApiPropertyOptional({
    description:
      'What the verification is for: `signup`, `login`, `step_up`, `change_phone` or a purpose the host declared; its policy picks the methods, limits and claim lifetime',
    example: 'step_up',
    maxLength: 32,
  })
  @IsOptional()
  @MaxLength(32)
  @IsString()
  purpose?: string;
}
