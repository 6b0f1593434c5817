import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/**
 * Bytes of data on the heap after full collections: every heap space but the code spaces (JIT
 * output comes and goes with optimisation, it is not data anything keeps). Exposes `gc` at run
 * time when node was started without --expose-gc.
 */
export function settledHeapUsed(): number {
  if (!collect) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (exposed) collect = exposed;
    else {
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as () => void;
    }
  }
  collect();
  collect();
  return getHeapSpaceStatistics()
    .filter((space) => !space.space_name.startsWith('code'))
    .reduce((sum, space) => sum + space.space_used_size, 0);
}
