/**
 * A small Prometheus registry: counters, histograms and gauges with labels,
 * rendered as the text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). Written
 * here rather than taken from prom-client: the service needs these three
 * kinds and the text format only (docs/architecture.md: few runtime dependencies).
 *
 * Label values are kept as given; callers bound their cardinality (route
 * patterns, not paths; status codes; a few fixed words).
 */

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Label values: backslash, double quote and line feed are escaped (format 0.0.4). */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text: backslash and line feed are escaped. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatNumber(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (Number.isNaN(value)) return 'NaN';
  return String(value);
}

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const parts = names.map((name, index) => `${name}="${escapeLabel(values[index] ?? '')}"`);
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

interface Metric {
  readonly name: string;
  render(): string[];
}

abstract class Labelled<Child> implements Metric {
  readonly name: string;
  readonly #help: string;
  readonly #type: string;
  protected readonly labelNames: readonly string[];
  protected readonly children = new Map<string, { values: readonly string[]; child: Child }>();

  constructor(name: string, help: string, type: string, labelNames: readonly string[]) {
    if (!NAME.test(name)) throw new TypeError(`metrics: invalid metric name "${name}"`);
    for (const label of labelNames) if (!LABEL.test(label) || label === 'le') throw new TypeError(`metrics: invalid label "${label}"`);
    this.name = name;
    this.#help = help;
    this.#type = type;
    this.labelNames = labelNames;
  }

  protected abstract create(): Child;

  /** The series for these label values (one per label name, in order). */
  protected child(values: readonly string[]): Child {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let entry = this.children.get(key);
    if (entry === undefined) {
      if (values.length !== this.labelNames.length) {
        throw new TypeError(`metrics: ${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
      }
      entry = { values: [...values], child: this.create() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  protected abstract series(values: readonly string[], child: Child): string[];

  render(): string[] {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.#help)}`, `# TYPE ${this.name} ${this.#type}`];
    for (const { values, child } of this.children.values()) lines.push(...this.series(values, child));
    return lines;
  }
}

export class Counter extends Labelled<{ value: number }> {
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, 'counter', labelNames);
    if (labelNames.length === 0) this.child([]);
  }
  protected create() {
    return { value: 0 };
  }
  inc(values: readonly string[] = [], by = 1): void {
    if (!(by >= 0)) throw new RangeError('metrics: a counter only goes up');
    this.child(values).value += by;
  }
  get(values: readonly string[] = []): number {
    return this.children.get(values.join('\u0000'))?.child.value ?? 0;
  }
  protected series(values: readonly string[], child: { value: number }): string[] {
    return [`${this.name}${labelText(this.labelNames, values)} ${formatNumber(child.value)}`];
  }
}

interface HistogramSeries {
  readonly counts: number[];
  sum: number;
  count: number;
}

const DEFAULT_SECONDS_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Histogram extends Labelled<HistogramSeries> {
  readonly #buckets: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[] = [], buckets: readonly number[] = DEFAULT_SECONDS_BUCKETS) {
    super(name, help, 'histogram', labelNames);
    if (buckets.length === 0 || buckets.some((bound, index) => index > 0 && bound <= buckets[index - 1]!)) {
      throw new TypeError('metrics: histogram buckets must be increasing');
    }
    this.#buckets = buckets;
  }
  protected create(): HistogramSeries {
    return { counts: this.#buckets.map(() => 0), sum: 0, count: 0 };
  }
  observe(values: readonly string[], value: number): void {
    const series = this.child(values);
    // Per-bucket (not cumulative) counts; render() accumulates.
    const index = this.#buckets.findIndex((bound) => value <= bound);
    if (index !== -1) series.counts[index]! += 1;
    series.sum += value;
    series.count += 1;
  }
  protected series(values: readonly string[], series: HistogramSeries): string[] {
    const lines: string[] = [];
    let cumulative = 0;
    this.#buckets.forEach((bound, index) => {
      cumulative += series.counts[index]!;
      lines.push(`${this.name}_bucket${labelText(this.labelNames, values, `le="${formatNumber(bound)}"`)} ${cumulative}`);
    });
    lines.push(`${this.name}_bucket${labelText(this.labelNames, values, 'le="+Inf"')} ${series.count}`);
    lines.push(`${this.name}_sum${labelText(this.labelNames, values)} ${formatNumber(series.sum)}`);
    lines.push(`${this.name}_count${labelText(this.labelNames, values)} ${series.count}`);
    return lines;
  }
}

export interface GaugeSample {
  readonly labels: readonly string[];
  readonly value: number;
}

/** A gauge read when the registry is rendered (memory, connection state). */
export class Gauge implements Metric {
  readonly name: string;
  readonly #help: string;
  readonly #labelNames: readonly string[];
  readonly #collect: () => readonly GaugeSample[];

  constructor(name: string, help: string, labelNames: readonly string[], collect: () => readonly GaugeSample[]) {
    if (!NAME.test(name)) throw new TypeError(`metrics: invalid metric name "${name}"`);
    this.name = name;
    this.#help = help;
    this.#labelNames = labelNames;
    this.#collect = collect;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.#help)}`, `# TYPE ${this.name} gauge`];
    for (const sample of this.#collect())
      lines.push(`${this.name}${labelText(this.#labelNames, sample.labels)} ${formatNumber(sample.value)}`);
    return lines;
  }
}

export class Registry {
  readonly #metrics = new Map<string, Metric>();

  register<M extends Metric>(metric: M): M {
    if (this.#metrics.has(metric.name)) throw new TypeError(`metrics: ${metric.name} is registered twice`);
    this.#metrics.set(metric.name, metric);
    return metric;
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.register(new Counter(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets?: readonly number[]): Histogram {
    return this.register(new Histogram(name, help, labelNames, buckets));
  }

  gauge(name: string, help: string, labelNames: readonly string[], collect: () => readonly GaugeSample[]): Gauge {
    return this.register(new Gauge(name, help, labelNames, collect));
  }

  /** The whole registry in the text format, ending with a line feed. */
  render(): string {
    const lines: string[] = [];
    for (const metric of this.#metrics.values()) lines.push(...metric.render());
    return `${lines.join('\n')}\n`;
  }
}
