import {
  Controller,
  Get,
  Header,
  Query,
  UseFilters,
  UseGuards,
  type CanActivate,
  type Type,
} from '@nestjs/common';
import { VerificationOptionsError } from '../core/option-rules.js';
import { VerificationProblemFilter } from '../http/verification-problem.filter.js';
import { VerificationOpsPage, type OpsPageQuery } from './verification-ops-page.service.js';

/** Where the host serves the ops page and who may see it. */
export interface OpsControllerOptions {
  /** The route, as `@Controller(path)` takes it (`admin/verification`). */
  path: string;
  /** The host's guards, at least one: the page is never public. */
  guards: (CanActivate | Type<CanActivate>)[];
}

/** No script, no frame, nothing from elsewhere: the page's inline style alone. */
export const OPS_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The ops page's controller, for the host to declare in its own module (`controllers: [...]`) beside
 * the unnamed registration: `GET {path}` the page (`?lang=en|ru&date=YYYY-MM-DD`) and `GET
 * {path}/ledger.csv` the day's ledger. The module mounts nothing itself; the page needs the host's
 * guards, and a path or guards it cannot use fail the boot naming the field.
 */
export function createVerificationOpsController(options: OpsControllerOptions): Type {
  const path = options?.path;
  if (
    typeof path !== 'string' ||
    !/^\/?[A-Za-z0-9_~.-]+(\/[A-Za-z0-9_~.-]+)*\/?$/.test(path) ||
    path.split('/').some((segment) => segment === '.' || segment === '..')
  )
    throw new VerificationOptionsError(
      'path',
      'must be a route path like "admin/verification"',
      'VerificationOpsPage',
    );
  const guards = options.guards;
  if (!Array.isArray(guards) || guards.length === 0)
    throw new VerificationOptionsError(
      'guards',
      'must name at least one of your guards: the page is never public',
      'VerificationOpsPage',
    );
  guards.forEach((guard, i) => {
    if (typeof guard !== 'function' && typeof (guard as CanActivate)?.canActivate !== 'function')
      throw new VerificationOptionsError(
        `guards[${i}]`,
        'must be a guard class or instance',
        'VerificationOpsPage',
      );
  });

  @Controller(path)
  @UseGuards(...guards)
  @UseFilters(VerificationProblemFilter)
  class VerificationOpsController {
    constructor(readonly page: VerificationOpsPage) {}

    @Get()
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Cache-Control', 'no-store')
    @Header('Content-Security-Policy', OPS_PAGE_CSP)
    @Header('X-Content-Type-Options', 'nosniff')
    render(@Query() query: OpsPageQuery): Promise<string> {
      return this.page.render(query);
    }

    @Get('ledger.csv')
    @Header('Content-Type', 'text/csv; charset=utf-8')
    @Header('Content-Disposition', 'attachment; filename="ledger.csv"')
    @Header('Cache-Control', 'no-store')
    @Header('X-Content-Type-Options', 'nosniff')
    csv(@Query() query: OpsPageQuery): Promise<string> {
      return this.page.csv(query);
    }
  }
  return VerificationOpsController;
}
