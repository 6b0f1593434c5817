import { formatDuration } from './format.js';

/**
 * Every `error_code` of the client routes, in words a person understands. `context` is what the
 * page was doing: 'start', 'check' (or switching) or 'status'. `waitMs` is what is left of a rate-limit wait.
 */
export function describeProblem(problem, context, waitMs = null) {
  // A VerificationClientError of the client (its problem document), or a plain { code }.
  const body = problem.problem ?? {};
  switch (problem.code) {
    case 'validation_error': {
      if (context === 'check') return 'Please enter the code as it arrived: digits only.';
      const fields = Array.isArray(body.errors) ? body.errors.map((e) => e.field) : [];
      if (fields.includes('phone_number') || /phone_number/.test(problem.message ?? ''))
        return "That doesn't look like a phone number. Please check it, for example +7 912 345-67-89.";
      if (fields.includes('method')) return 'Please choose how we should check your number.';
      return 'Something in the form is not right. Please check it and try again.';
    }
    case 'invalid_code': {
      const left = body.attempts_remaining;
      if (left === 0) return "That code isn't right, and no attempts are left. Please start again.";
      if (typeof left === 'number')
        return `That code isn't right. You have ${left} ${left === 1 ? 'attempt' : 'attempts'} left.`;
      return "That code isn't right. Please check it and try again.";
    }
    case 'method_not_available':
      return context === 'check'
        ? 'This method confirms your number by the call itself; there is no code to enter.'
        : "This way of checking isn't available here. Please choose another one.";
    case 'phone_not_allowed':
      return body.reason === 'number_type'
        ? 'Only mobile numbers can be verified. Please enter a mobile number.'
        : "Numbers from this country can't be verified here. Please use another number.";
    case 'not_found':
      return "This verification can't be found any more. Please start again.";
    case 'not_pending':
      switch (body.verification_status) {
        case 'expired':
          return 'This verification has expired. Please start again.';
        case 'verified':
          return 'This number is already verified.';
        case 'failed':
          return 'This verification has failed. Please start again.';
        default:
          return 'This verification is already finished.';
      }
    case 'too_many_wrong_codes': {
      const wait = waitMs !== null && waitMs > 0 ? formatDuration(waitMs) : 'a while';
      return `Too many wrong codes for this number. Please wait ${wait} before trying again.`;
    }
    case 'rate_limit_exceeded': {
      const wait = waitMs !== null && waitMs > 0 ? formatDuration(waitMs) : 'a moment';
      switch (body.reason) {
        case 'resend_cooldown':
          return `We just sent something to this number. You can ask again in ${wait}.`;
        case 'start_phone_limit':
        case 'start_phone_caller_limit':
          return `Too many verifications of this number. Please wait ${wait} before trying again.`;
        case 'start_ip_limit':
          return `Too many verifications from this device. Please wait ${wait} before trying again.`;
        case 'check_limit':
          return `Too many codes entered. Please wait ${wait} before trying again.`;
        default:
          return `Too many attempts. Please wait ${wait} before trying again.`;
      }
    }
    case 'switch_in_progress':
      return 'Another way is already on its way. One moment, please.';
    case 'fallback_not_available':
      return 'Please give this way a little longer; you can try another way soon.';
    case 'journey_limit_reached':
      return 'There is no other way left to check this number. Please finish this one or start again later.';
    case 'start_refused':
      return "We can't start a verification for this request right now. Please try again later.";
    case 'service_unavailable':
      return 'Phone verification is temporarily unavailable. Please try again in a moment.';
    case 'payload_too_large':
      return 'That was too much text. Please shorten it and try again.';
    case 'unsupported_media_type':
    case 'cross_site_request':
      return 'This page cannot send the request. Please reload it and try again.';
    case 'network_error':
      return "We can't reach the server. Please check your connection and try again.";
    default:
      return `Something went wrong (${problem.code}). Please try again.`;
  }
}
