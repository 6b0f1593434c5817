import { VersioningType } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';

/** What is read of Nest's container: the app's global prefix and versioning (`app.setGlobalPrefix`, `enableVersioning`). */
interface ApplicationConfig {
  getGlobalPrefix?(): unknown;
  getVersioning?(): { type?: unknown; defaultVersion?: unknown; prefix?: unknown } | undefined;
}

/**
 * Nest keeps the app's global prefix and versioning in its container's application config, which a module
 * reaches only through its ModuleRef. Set between `NestFactory.create` and `listen`: read at bootstrap or later.
 */
function applicationConfig(moduleRef: ModuleRef | undefined): ApplicationConfig | undefined {
  return (moduleRef as unknown as { container?: { applicationConfig?: ApplicationConfig } } | undefined)
    ?.container?.applicationConfig;
}

/** The global prefix, without slashes, or '' when none is set or it cannot be read. */
export function globalPrefix(moduleRef: ModuleRef | undefined): string {
  try {
    const prefix = applicationConfig(moduleRef)?.getGlobalPrefix?.();
    return typeof prefix === 'string' ? prefix.replace(/^\/+|\/+$/g, '') : '';
  } catch {
    return '';
  }
}

/**
 * The URI version segment Nest puts before a route of the module's (`v1` under `enableVersioning({ type:
 * VersioningType.URI, defaultVersion: '1' })`; the first of several), or '' (no URI versioning, none by default).
 */
export function uriVersion(moduleRef: ModuleRef | undefined): string {
  try {
    const versioning = applicationConfig(moduleRef)?.getVersioning?.();
    if (versioning?.type !== VersioningType.URI) return '';
    const { defaultVersion, prefix } = versioning;
    const version = Array.isArray(defaultVersion) ? defaultVersion[0] : defaultVersion;
    // Nest writes a plain-JS host's number as its text (`String(version)`).
    if (typeof version !== 'string' && typeof version !== 'number') return '';
    return `${prefix === false ? '' : typeof prefix === 'string' ? prefix : 'v'}${String(version)}`;
  } catch {
    return '';
  }
}

/** `/{global prefix}/{URI version}/{path}` as the browser sees the route (a path of the module's options). */
export function servedPath(moduleRef: ModuleRef | undefined, path: string): string {
  return `/${[globalPrefix(moduleRef), uriVersion(moduleRef), path].filter((part) => part !== '').join('/')}`;
}

/**
 * The declared path of the route a request matched (global prefix and URI version included), as the
 * platform records it: Express `req.baseUrl` + `req.route.path`, Fastify `request.routeOptions.url`;
 * undefined when neither says (a pattern with parameters is never a cookie's path: the caller checks).
 */
export function matchedRoute(request: unknown): string | undefined {
  const r = request as
    { route?: { path?: unknown }; baseUrl?: unknown; routeOptions?: { url?: unknown } } | undefined;
  const fastify = r?.routeOptions?.url;
  if (typeof fastify === 'string') return fastify;
  const express = r?.route?.path;
  if (typeof express === 'string') return `${typeof r?.baseUrl === 'string' ? r.baseUrl : ''}${express}`;
  return undefined;
}

/**
 * The path up to its first segment that is a pattern (a parameter `:tenant`, a wildcard, an optional
 * group), `/` at least: a cookie's Path is matched literally, so `/:tenant/verification` would match no
 * request while `/` matches every tenant's routes.
 */
export function literalPrefix(path: string): string {
  const segments = path.split('/');
  for (const [i, segment] of segments.entries())
    if (/[:*?(){}]/.test(segment)) return segments.slice(0, i).join('/') || '/';
  return path;
}
