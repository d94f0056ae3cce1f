/**
 * Small benchmark helpers. docs/performance.md: absolute numbers drift between
 * runs and machines, so every figure is reported next to its baseline from
 * the same run, as a ratio.
 */

export interface BenchResult {
  name: string;
  opsPerSec: number;
  /** Name of the result this one is compared with. */
  baseline?: string;
  /** opsPerSec / baseline's opsPerSec (or the median of per-round ratios; see note). */
  ratio?: number;
  note?: string;
}

export interface MeasureOptions {
  /** Measuring time after warm-up, in ms (default 1000). */
  minMs?: number;
  /** Warm-up time, in ms (default minMs / 5, at least 50). */
  warmupMs?: number;
  /**
   * 'wall' (default) counts elapsed time; 'cpu' counts the CPU time this
   * process used (process.cpuUsage, all threads, so GC helpers count), which
   * keeps figures steady when other processes share the cores.
   */
  clock?: 'wall' | 'cpu';
}

function clockOf(options: MeasureOptions): () => number {
  if (options.clock === 'cpu') {
    return () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1000;
    };
  }
  return () => performance.now();
}

/**
 * Runs `fn` in a synchronous loop: a warm-up, then as many calls as fit in
 * `minMs`, checking the clock only every batch so timing costs stay out of
 * the figure. Returns operations per second.
 */
export function measure(name: string, fn: () => unknown, options: MeasureOptions = {}): number {
  const minMs = options.minMs ?? 1000;
  const warmupMs = options.warmupMs ?? Math.max(50, minMs / 5);
  const now = clockOf(options);
  let sink: unknown;
  try {
    // Warm-up, also sizing a batch that takes about 5 ms.
    let batch = 1;
    const warmupEnd = performance.now() + warmupMs;
    while (performance.now() < warmupEnd) {
      const started = performance.now();
      for (let i = 0; i < batch; i++) sink = fn();
      const elapsed = performance.now() - started;
      if (elapsed < 5) batch = Math.min(batch * 2, 1 << 20);
    }
    let operations = 0;
    const started = now();
    let elapsed = 0;
    do {
      for (let i = 0; i < batch; i++) sink = fn();
      operations += batch;
      elapsed = now() - started;
    } while (elapsed < minMs);
    if (sink === Symbol.for('never')) console.log(sink); // keep the result alive
    return (operations * 1000) / elapsed;
  } catch (error) {
    throw new Error(`bench: ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Runs {@link measureInterleaved} `rounds` times and returns the per-round
 * figures by name, for medians and per-round ratios.
 */
export function measureRounds(
  entries: readonly { name: string; fn: () => unknown }[],
  rounds: number,
  options: MeasureOptions = {},
): Map<string, number[]> {
  const figures = new Map<string, number[]>(entries.map((entry) => [entry.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, opsPerSec] of measureInterleaved(entries, options)) figures.get(name)!.push(opsPerSec);
  }
  return figures;
}

/**
 * Measures several functions finely interleaved: short batches (~2 ms) of
 * each in turn until every one has run `minMs`, time kept per function. On a
 * shared machine the load then falls on all contenders alike, which keeps
 * their ratios honest even when absolute figures swing. Returns ops/s by name.
 */
function measureInterleaved(entries: readonly { name: string; fn: () => unknown }[], options: MeasureOptions = {}): Map<string, number> {
  const minMs = options.minMs ?? 1000;
  const warmupMs = options.warmupMs ?? Math.max(50, minMs / 5);
  const now = clockOf(options);
  const batches: number[] = [];
  let sink: unknown;
  for (const entry of entries) {
    // Warm up and size a batch of about 2 ms.
    let batch = 1;
    const warmupEnd = performance.now() + warmupMs / entries.length;
    while (performance.now() < warmupEnd) {
      const started = performance.now();
      for (let i = 0; i < batch; i++) sink = entry.fn();
      if (performance.now() - started < 2) batch = Math.min(batch * 2, 1 << 20);
    }
    batches.push(batch);
  }
  const operations = entries.map(() => 0);
  const elapsed = entries.map(() => 0);
  while (elapsed.some((time) => time < minMs)) {
    entries.forEach((entry, index) => {
      const batch = batches[index]!;
      const started = now();
      for (let i = 0; i < batch; i++) sink = entry.fn();
      elapsed[index]! += now() - started;
      operations[index]! += batch;
    });
  }
  if (sink === Symbol.for('never')) console.log(sink); // keep the result alive
  return new Map(entries.map((entry, index) => [entry.name, (operations[index]! * 1000) / elapsed[index]!]));
}

/** Median over rounds of a[i] / b[i]: robust to drift between rounds. */
export function roundRatio(a: readonly number[], b: readonly number[]): number {
  return median(a.map((value, index) => value / b[index]!));
}

export function formatTable(results: readonly BenchResult[]): string {
  const rows = results.map((result) => [
    result.name,
    Math.round(result.opsPerSec).toLocaleString('en-US'),
    result.baseline ?? '',
    result.ratio === undefined ? '' : result.ratio.toFixed(3),
    result.note ?? '',
  ]);
  const header = ['benchmark', 'ops/s', 'baseline', 'ratio', 'note'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column === 1 || column === 3 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}
