import { Inject } from '@nestjs/common';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import { getVerificationToken } from './verification-registration.js';

/**
 * Injects the module's options as resolved at boot (`ResolvedVerificationOptions`: defaults applied,
 * checked). A subclass of `VerificationControllerBase` that declares a constructor passes them to
 * `super()`; host code reads the route prefix (static in forRootAsync) or a limit without a copy of its own.
 * The module exports them, so any module importing `VerificationModule` can inject them. `name`: those
 * of the named registration `name` (`forRoot({ name })`).
 */
export const InjectVerificationOptions = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getVerificationToken(RESOLVED_VERIFICATION_OPTIONS, name));
