/**
 * Used sign-in nonces and OAuth states through Redis (docs/protocol.md §5: "consumes
 * the nonce exactly once ... through Redis `SET NX` when configured").
 *
 * `SET oc:nonce:<nonce> 1 NX PXAT <expiresAt>`: the first instance to set the
 * key wins, and the key lives exactly as long as the challenge could be
 * presented. A key that would expire within a second is kept for one second,
 * so a nonce at the edge of its lifetime cannot be replayed in the gap
 * between the expiry check and this write.
 *
 * Unreachable Redis fails closed (503 `not_ready`): falling back to the
 * database table would forget every nonce Redis holds, reopening replays.
 */
import type { Redis } from 'ioredis';
import { OcError } from '../errors.js';
import type { NonceGuard } from '../storage/index.js';

const NONCE_KEY_PREFIX = 'oc:nonce:';
const MIN_LIFETIME_MS = 1_000;

export interface RedisNonceGuardOptions {
  readonly redis: Redis;
  readonly now: () => number;
  readonly prefix?: string;
  readonly onError?: (error: unknown) => void;
}

export function createRedisNonceGuard(options: RedisNonceGuardOptions): NonceGuard {
  const { redis, now } = options;
  const prefix = options.prefix ?? NONCE_KEY_PREFIX;
  return {
    async consume(nonce, expiresAtMs) {
      const keepUntil = Math.ceil(Math.max(expiresAtMs, now() + MIN_LIFETIME_MS));
      let answer: string | null;
      try {
        answer = await redis.set(prefix + nonce, '1', 'PXAT', keepUntil, 'NX');
      } catch (error) {
        options.onError?.(error);
        throw new OcError('not_ready', 'nonce store: Redis is unreachable; try again shortly', { cause: error });
      }
      return answer === 'OK';
    },
  };
}
