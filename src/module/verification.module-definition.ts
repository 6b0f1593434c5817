import { ConfigurableModuleBuilder, type ConfigurableModuleAsyncOptions } from '@nestjs/common';
import type { VerificationModuleOptions } from '../options/verification.options.js';

export const {
  ConfigurableModuleClass: ConfigurableVerificationModule,
  MODULE_OPTIONS_TOKEN: VERIFICATION_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<VerificationModuleOptions>({ moduleName: 'Verification' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createVerificationOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** What a `useClass` / `useExisting` options provider implements for `forRootAsync`. */
export interface VerificationOptionsFactory {
  createVerificationOptions(): VerificationModuleOptions | Promise<VerificationModuleOptions>;
}

/** `forRoot`'s options: the module's options, and whether the module is global (`isGlobal`). */
export type VerificationModuleRootOptions = VerificationModuleOptions & { isGlobal?: boolean };

/** `forRootAsync`'s options as Nest's module builder takes them (before the route options added to them). */
export type VerificationModuleAsyncBase = ConfigurableModuleAsyncOptions<
  VerificationModuleOptions,
  'createVerificationOptions'
> & { isGlobal?: boolean };
