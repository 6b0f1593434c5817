import { ApiProperty, ApiPropertyOptional } from './openapi-decorators.js';
import { CODE_ENTRIES } from '../core/verification-method.js';
import { isoTime } from '../core/iso-time.js';
import type {
  CancelView,
  CheckView,
  MethodView,
  StartView,
  StatusView,
} from '../verification/verification.views.js';

/** Response bodies of the client routes (snake_case, for frontends). No cost, no upstream ids. */
export class StartVerificationResponse {
  @ApiProperty() verification_id!: string;
  @ApiProperty() method!: string;
  @ApiProperty({ example: 'sent' }) status!: string;
  @ApiProperty({ description: 'The number as normalised (E.164)' }) phone_number!: string;
  @ApiProperty({ format: 'date-time' }) expires_at!: string;
  @ApiProperty() poll_interval_ms!: number;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) resend_available_at!: string | null;
  @ApiProperty({ description: 'Whether a code field is to be shown now' }) awaiting_code!: boolean;
  @ApiProperty({ description: 'An identical pending start was handed back (no new charge)' })
  resumed!: boolean;
  @ApiPropertyOptional({ description: 'Exact digits of the code, when the API gives it' })
  code_length?: number;
  @ApiPropertyOptional({ description: 'While awaiting_code: fewest digits the code may have' })
  code_length_min?: number;
  @ApiPropertyOptional({
    description: 'While awaiting_code: most digits the code may have (size the field by it)',
  })
  code_length_max?: number;
  @ApiPropertyOptional({ description: 'reverse_flash_call: the number the user calls' })
  number_to_call?: string;
  @ApiPropertyOptional({ description: 'msgr2_bot: link (or QR code) that opens the bot' }) deep_link?: string;
  @ApiPropertyOptional({
    description:
      'After a switch: send it back as `journey_token` with every later call of this verification (a server that lost the journey, after a restart, follows its current step by it)',
  })
  journey_token?: string;

  static from(view: StartView): StartVerificationResponse {
    return withoutUndefined({
      verification_id: view.verificationId,
      method: view.method,
      status: view.status,
      phone_number: view.phoneNumber,
      expires_at: isoTime(view.expiresAt),
      poll_interval_ms: view.pollIntervalMs,
      resend_available_at: view.resendAvailableAt ? isoTime(view.resendAvailableAt) : null,
      awaiting_code: view.awaitingCode,
      resumed: view.resumed,
      code_length: view.codeLength,
      code_length_min: view.codeLengthMin,
      code_length_max: view.codeLengthMax,
      number_to_call: view.numberToCall,
      deep_link: view.deepLink,
      journey_token: view.journeyToken,
    });
  }
}

export class CheckVerificationResponse {
  @ApiProperty() verification_id!: string;
  @ApiProperty({ description: '`sent` after an operator_id code was accepted: keep polling' })
  status!: string;
  @ApiProperty() verified!: boolean;

  static from(view: CheckView): CheckVerificationResponse {
    return { verification_id: view.verificationId, status: view.status, verified: view.verified };
  }
}

export class VerificationStatusResponse {
  @ApiProperty() verification_id!: string;
  @ApiProperty({ description: "The answering session's method (the current one, or the one that verified)" })
  method!: string;
  @ApiProperty({ description: 'A session status, or `canceled` once the verification was canceled' })
  status!: string;
  @ApiProperty({ example: '+7******4567' }) phone_number!: string;
  @ApiProperty({ format: 'date-time' }) expires_at!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) verified_at!: string | null;
  @ApiProperty() awaiting_code!: boolean;
  @ApiProperty() poll_interval_ms!: number;
  @ApiPropertyOptional({ description: 'Exact digits of the code, when the API gives it' })
  code_length?: number;
  @ApiPropertyOptional({ description: 'While awaiting_code: fewest digits the code may have' })
  code_length_min?: number;
  @ApiPropertyOptional({
    description: 'While awaiting_code: most digits the code may have (size the field by it)',
  })
  code_length_max?: number;
  @ApiPropertyOptional() number_to_call?: string;
  @ApiPropertyOptional() deep_link?: string;
  @ApiProperty({
    description: 'The methods this verification tried, in order (the current one last)',
    type: [String],
  })
  methods_tried!: string[];
  @ApiProperty({
    description: 'The methods `POST /switch` may move to now, in the policy order (empty once it is over)',
    type: [String],
  })
  switch_methods!: string[];
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When "try another way" may be offered (absent when no method is left or it is over)',
  })
  fallback_available_at?: string;
  @ApiPropertyOptional({
    description:
      'After a switch: send it back as `journey_token` with every later call of this verification (a server that lost the journey, after a restart, follows its current step by it)',
  })
  journey_token?: string;

  static from(view: StatusView): VerificationStatusResponse {
    return withoutUndefined({
      verification_id: view.verificationId,
      method: view.method,
      status: view.status,
      phone_number: view.phoneNumberMasked,
      expires_at: isoTime(view.expiresAt),
      verified_at: view.verifiedAt ? isoTime(view.verifiedAt) : null,
      awaiting_code: view.awaitingCode,
      poll_interval_ms: view.pollIntervalMs,
      code_length: view.codeLength,
      code_length_min: view.codeLengthMin,
      code_length_max: view.codeLengthMax,
      number_to_call: view.numberToCall,
      deep_link: view.deepLink,
      methods_tried: view.methodsTried,
      switch_methods: view.switchMethods,
      fallback_available_at: view.fallbackAvailableAt && isoTime(view.fallbackAvailableAt),
      journey_token: view.journeyToken,
    });
  }
}

export class CancelVerificationResponse {
  @ApiProperty() verification_id!: string;
  @ApiProperty({ enum: ['canceled'] }) status!: 'canceled';

  static from(view: CancelView): CancelVerificationResponse {
    return { verification_id: view.verificationId, status: view.status };
  }
}

export class VerificationMethodItem {
  @ApiProperty() method!: string;
  @ApiProperty({ enum: [...CODE_ENTRIES] }) code_entry!: string;
  @ApiProperty() poll_interval_ms!: number;
}

export class VerificationMethodsResponse {
  @ApiProperty({ type: [VerificationMethodItem] }) methods!: VerificationMethodItem[];
  @ApiPropertyOptional({
    description:
      'The country (ISO 3166-1 alpha-2) a number without a country code is read in (`phone.defaultCountry`)',
  })
  default_country?: string;

  static from(views: MethodView[], defaultCountry?: string): VerificationMethodsResponse {
    return withoutUndefined({
      methods: views.map((v) => ({
        method: v.method,
        code_entry: v.codeEntry,
        poll_interval_ms: v.pollIntervalMs,
      })),
      default_country: defaultCountry,
    });
  }
}

/** A copy without the undefined fields: a host that calls `from` itself sees only the fields the answer has. */
function withoutUndefined<T extends object>(value: T): T {
  const copy = {} as T;
  for (const key in value) if (value[key] !== undefined) copy[key] = value[key];
  return copy;
}
