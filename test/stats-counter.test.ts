import { describe, expect, it, vi } from 'vitest';
import { createEventCounter } from '../src/features/stats/counter.js';

describe('attestation call counter', () => {
  it('writes one row per kind per batch, not one per call', async () => {
    const written: Array<[string, number, number]> = [];
    const counter = createEventCounter({
      record: async (kind, at, count) => {
        written.push([kind, at, count]);
      },
      now: () => 1000,
      intervalMs: 60_000,
      onError: () => {},
    });
    for (let index = 0; index < 500; index++) counter.count('check');
    counter.count('verify');
    expect(written).toEqual([]);
    await counter.flush();
    expect(written).toEqual([
      ['check', 1000, 500],
      ['verify', 1000, 1],
    ]);
    await counter.flush();
    expect(written).toHaveLength(2);
  });

  it('flushes by itself after the interval', async () => {
    const written: number[] = [];
    const counter = createEventCounter({
      record: async (_kind, _at, count) => void written.push(count),
      now: () => 0,
      intervalMs: 20,
      onError: () => {},
    });
    counter.count('check');
    counter.count('check');
    await vi.waitFor(() => expect(written).toEqual([2]), { timeout: 5_000, interval: 10 });
    await counter.close();
  });

  it('reports a failed write and keeps counting', async () => {
    const errors: unknown[] = [];
    let fail = true;
    const written: number[] = [];
    const counter = createEventCounter({
      record: async (_kind, _at, count) => {
        if (fail) throw new Error('storage down');
        written.push(count);
      },
      now: () => 0,
      intervalMs: 60_000,
      onError: (error) => errors.push(error),
    });
    counter.count('verify');
    await counter.flush();
    expect(errors).toHaveLength(1);
    fail = false;
    counter.count('verify');
    await counter.flush();
    expect(written).toEqual([1]);
  });
});
