import type { ModuleRef } from '@nestjs/core';

/** What is read of Nest's container: the app's global prefix (`app.setGlobalPrefix`). */
interface WithApplicationConfig {
  container?: { applicationConfig?: { getGlobalPrefix?(): unknown } };
}

/**
 * The global prefix, without slashes, or '' when none is set or it cannot be read: Nest keeps it in
 * its container's application config, which a module reaches only through its ModuleRef. Set between
 * `NestFactory.create` and `listen`: read it at bootstrap or later.
 */
export function globalPrefix(moduleRef: ModuleRef | undefined): string {
  try {
    const prefix = (
      moduleRef as unknown as WithApplicationConfig | undefined
    )?.container?.applicationConfig?.getGlobalPrefix?.();
    return typeof prefix === 'string' ? prefix.replace(/^\/+|\/+$/g, '') : '';
  } catch {
    return '';
  }
}

/** `/{global prefix}/{path}` as the browser sees the route (a path of the module's options). */
export function servedPath(moduleRef: ModuleRef | undefined, path: string): string {
  return `/${[globalPrefix(moduleRef), path].filter((part) => part !== '').join('/')}`;
}
