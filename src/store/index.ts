export {
  VerificationStore,
  type StoreMessageListener,
  type StoreWriteOptions,
} from './verification-store.interface.js';
export type { StoreBatchResults, StoreOperation, StoreOperationResults } from './store-batch.js';
export { MemoryStore, type MemoryStoreOptions } from './memory.store.js';
export { RedisStore, type RedisStoreOptions } from './redis.store.js';
export type { RedisDriverName } from './open-redis-client.js';
export type {
  IoRedisClientLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  RedisClientLike,
} from './redis-command-runner.js';
export { VerificationStoreUnavailableError } from './store-unavailable.error.js';
export { createStore, isVerificationStore } from './create-store.js';
