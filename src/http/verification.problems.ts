import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse } from './openapi-decorators.js';
import { CLIENT_ERROR_STATUSES, type ClientErrorCode } from '../core/verification.errors.js';

/** The problem document (RFC 9457) of every refusal of the client routes, for the OpenAPI document. */
export class VerificationProblem {
  @ApiProperty({ example: 'urn:nestjs-phone-verification:error:invalid_code' }) type!: string;
  @ApiProperty({ example: 'Invalid code' }) title!: string;
  @ApiProperty({ type: 'integer', description: 'The HTTP status', example: 400 }) status!: number;
  @ApiProperty({ example: 'The code is not correct' }) detail!: string;
  @ApiProperty({ description: 'Stable code to branch on', example: 'invalid_code' }) error_code!: string;
  @ApiPropertyOptional({ description: 'invalid_code: attempts left on this session', type: 'integer' })
  attempts_remaining?: number;
  @ApiPropertyOptional({ description: "not_pending: the verification's status (e.g. expired, verified)" })
  verification_status?: string;
  @ApiPropertyOptional({ description: 'rate_limit_exceeded, phone_not_allowed, start_refused: why' })
  reason?: string;
  @ApiPropertyOptional({
    description: 'method_not_available: the methods offered (on switch: the methods it may move to)',
    type: [String],
  })
  available_methods?: string[];
  @ApiPropertyOptional({
    description: 'journey_limit_reached: which ceiling (`max_steps`, `max_cost`, or `methods`: none left)',
  })
  limit?: string;
  @ApiPropertyOptional({ description: 'fallback_not_available: when it will be', format: 'date-time' })
  fallback_available_at?: string;
  @ApiPropertyOptional({
    description: 'validation_error: the offending fields',
    type: 'array',
    items: {
      type: 'object',
      properties: { field: { type: 'string', nullable: true }, message: { type: 'string' } },
    },
  })
  errors?: { field: string | null; message: string }[];
  @ApiPropertyOptional({
    description: 'purpose_not_allowed, method_not_available: the purpose named on start',
  })
  purpose?: string;
  @ApiPropertyOptional({ description: "step_up_required: the host's challenge to pass (e.g. captcha)" })
  challenge?: string;
}

/** Refusals every body route (start, check, switch, cancel) can give before its handler runs (ClientBodyGuard). */
const BODY_RULES: ClientErrorCode[] = [
  'validation_error',
  'cross_site_request',
  'payload_too_large',
  'unsupported_media_type',
];

/** The error codes each client route can answer with. */
export const ROUTE_ERROR_CODES = {
  start: [
    ...BODY_RULES,
    'purpose_not_allowed',
    'step_up_required',
    'method_not_available',
    'phone_not_allowed',
    'start_refused',
    'rate_limit_exceeded',
    'too_many_wrong_codes',
    'method_held',
    'service_unavailable',
  ],
  check: [
    ...BODY_RULES,
    'invalid_code',
    'method_not_available',
    'not_found',
    'not_pending',
    'rate_limit_exceeded',
    'too_many_wrong_codes',
    'service_unavailable',
  ],
  switch: [
    ...BODY_RULES,
    'method_not_available',
    'not_found',
    'not_pending',
    'journey_limit_reached',
    'fallback_not_available',
    'switch_in_progress',
    'start_refused',
    'rate_limit_exceeded',
    'too_many_wrong_codes',
    'method_held',
    'service_unavailable',
  ],
  cancel: [
    ...BODY_RULES,
    'not_found',
    'not_pending',
    'switch_in_progress',
    'rate_limit_exceeded',
    'service_unavailable',
  ],
  status: ['not_found', 'rate_limit_exceeded', 'service_unavailable'],
  statusEvents: ['not_found', 'rate_limit_exceeded', 'service_unavailable'],
  methods: ['validation_error', 'purpose_not_allowed', 'service_unavailable'],
} satisfies Record<string, ClientErrorCode[]>;

const PROBLEM_SCHEMA_REF = `#/components/schemas/${VerificationProblem.name}`;

/** The codes whose answers say how long to wait (the README's error table). */
const WAIT_CODES: readonly ClientErrorCode[] = [
  'rate_limit_exceeded',
  'too_many_wrong_codes',
  'service_unavailable',
  'fallback_not_available',
  'switch_in_progress',
  'method_held',
];
const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before asking again (with the codes that say to wait)',
    schema: { type: 'integer', minimum: 1 },
  },
};

/**
 * One OpenAPI response per HTTP status the route can refuse with, each `application/problem+json`
 * with the problem schema and its `error_code` narrowed to the codes of that status, so generated
 * clients get typed errors.
 */
export function ApiProblemResponses(codes: readonly ClientErrorCode[]): MethodDecorator {
  const byStatus = new Map<number, ClientErrorCode[]>();
  for (const code of codes) {
    const status = CLIENT_ERROR_STATUSES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return applyDecorators(
    ApiExtraModels(VerificationProblem),
    ...[...byStatus].map(([status, statusCodes]) =>
      ApiResponse({
        status,
        description: statusCodes.join(', '),
        ...(statusCodes.some((code) => WAIT_CODES.includes(code)) ? { headers: RETRY_AFTER } : {}),
        content: {
          'application/problem+json': {
            schema: {
              allOf: [
                { $ref: PROBLEM_SCHEMA_REF },
                { properties: { error_code: { type: 'string', enum: statusCodes } } },
              ],
            },
          },
        },
      }),
    ),
  );
}
