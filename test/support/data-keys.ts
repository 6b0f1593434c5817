import { DataKeys } from '../../src/core/data-keys.js';

/** The data key the specs that build protection or stats parts by hand digest and seal with. */
export const SPEC_DATA_KEYS = new DataKeys(undefined, 'spec-secret');
