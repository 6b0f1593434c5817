import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { VerificationModuleOptions } from '../options/verification.options.js';

export const {
  ConfigurableModuleClass: ConfigurableVerificationModule,
  MODULE_OPTIONS_TOKEN: VERIFICATION_MODULE_OPTIONS,
  OPTIONS_TYPE: VERIFICATION_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: VERIFICATION_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<VerificationModuleOptions>({ moduleName: 'Verification' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createVerificationOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** What a `useClass` / `useExisting` options provider implements for `forRootAsync`. */
export interface VerificationOptionsFactory {
  createVerificationOptions(): VerificationModuleOptions | Promise<VerificationModuleOptions>;
}
