/**
 * The one Redis client of an instance (docs/protocol.md §1 `REDIS_URL`): shared
 * rate limits, the /api/check cache, used nonces and the cross-instance
 * single flight all go through it.
 *
 * Built to fail fast rather than queue: with no offline queue a command
 * sent while Redis is down rejects at once, so a request never waits on a
 * dead Redis; each caller decides what a failure means (fail open or
 * closed: src/platform/limits/resilient.ts, src/platform/redis/*.ts). ioredis reconnects in
 * the background.
 *
 * `REDIS_URL` may carry ioredis options as query parameters, notably
 * `?keyPrefix=<prefix>` to share one Redis database between deployments
 * (or test runs): every key of the service then starts with that prefix.
 */
import { Redis } from 'ioredis';

const REDIS_CONNECT_TIMEOUT_MS = 2_000;
/** A command that gets no answer in this time fails like a refused one. */
const REDIS_COMMAND_TIMEOUT_MS = 1_000;

export function createRedisClient(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    // Reconnect forever, backing off to 2 s: Redis coming back must heal the instance.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 2_000),
  });
}

/**
 * Starts connecting and waits until the client is ready, or the first
 * attempt failed, or `waitMs` passed; answers whether it is ready. A Redis
 * that is down at start does not stop the service: /readyz reports it and
 * the failure policies apply until it comes back.
 */
export async function connectRedis(redis: Redis, waitMs = REDIS_CONNECT_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), waitMs);
    timer.unref();
  });
  const attempt = redis.connect().then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** PING with the command timeout: the readiness check. */
export async function pingRedis(redis: Redis): Promise<boolean> {
  try {
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  }
}
