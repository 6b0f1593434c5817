/** `node --import ./hide-optional-peers.register.mjs entry.ts`: installs hide-optional-peers.hooks.mjs. */
import { register } from 'node:module';

register('./hide-optional-peers.hooks.mjs', import.meta.url);
