import { Inject } from '@nestjs/common';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';

/**
 * Injects the module's options as resolved at boot (`ResolvedVerificationOptions`: defaults applied,
 * checked). A subclass of `VerificationControllerBase` that declares a constructor passes them to
 * `super()`; host code reads the route prefix (static in forRootAsync) or a limit without a copy of its own.
 * The module exports them, so any module importing `VerificationModule` can inject them.
 */
export const InjectVerificationOptions = (): PropertyDecorator & ParameterDecorator =>
  Inject(RESOLVED_VERIFICATION_OPTIONS);
