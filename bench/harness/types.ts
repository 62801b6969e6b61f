import type { Spread } from './stats.js';

/** Named numbers one side of a benchmark reports for one round (units are in the names: _ms, _per_s, _mib). */
export type Figures = Record<string, number>;

/** One side (the product or its baseline): started once, measured several times, stopped once. */
export interface Side {
  label: string;
  start(): Promise<void>;
  /** One measured round; returns its figures. */
  round(index: number): Promise<Figures>;
  stop(): Promise<void>;
}

/** A target check: `figure` of the product (or the product/baseline ratio) against a limit. */
export interface Check {
  name: string;
  value: number | null;
  limit: number;
  /** 'min': value must be >= limit; 'max': value must be <= limit. */
  kind: 'min' | 'max';
  pass: boolean;
}

/** What a benchmark file exports. The harness alternates product and baseline rounds and takes medians. */
export interface Benchmark {
  id: string;
  title: string;
  /** The target as the issue states it. */
  target: string;
  /** Name of the baseline ("-" when the benchmark has none). */
  baselineName: string;
  /** Rounds per side; a verdict needs at least 3 (MIN_VERDICT_ROUNDS), quick runs take none. */
  rounds: number;
  /** Counts and durations this benchmark uses (recorded with the result). */
  settings: Record<string, number | string>;
  /** Figure whose product/baseline quotient is reported as the ratio. */
  ratioFigure?: string;
  /** Returns why the subject cannot be measured in this tree (missing capability), or null. */
  unavailable(): Promise<string | null>;
  /** Builds both sides for one run; the baseline may be absent. */
  sides(ctx: BenchContext): Promise<{ product: Side; baseline?: Side }>;
  /** Target checks on the medians. */
  checks(
    product: Figures,
    baseline: Figures | undefined,
    ratio: number | null,
    rounds: { product: Figures[]; baseline: Figures[] },
  ): Check[];
}

export interface BenchContext {
  /** Connection settings of the local services. */
  redisUrl: string;
  mongoUri: string;
  /**
   * The run's own MongoDB-protocol servers (scripts/bench.mjs): the embedded default of `npm start`
   * (mongo-java-server H2, commit per write; also `mongoUri`) and the test server (in memory).
   */
  mongoServers: { embedded: string; test: string };
  /** Scratch directory for this run (object stores, generated files). */
  workDir: string;
  /** Shared cache for generated inputs that are costly to build (spreadsheets, images). */
  cacheDir: string;
  log(msg: string): void;
}

export interface BenchOutcome {
  id: string;
  title: string;
  target: string;
  baselineName: string;
  status: 'measured' | 'not_measured' | 'failed';
  reason?: string;
  settings: Record<string, number | string>;
  rounds: { product: Figures[]; baseline: Figures[] };
  /** Per-figure medians over the rounds (what checks and the ratio use). */
  product?: Figures;
  baseline?: Figures;
  /** Per-figure min/median/max over the rounds of each side. */
  spread?: { product: Record<string, Spread>; baseline?: Record<string, Spread> };
  ratioFigure?: string;
  ratio: number | null;
  checks: Check[];
  /** null: no verdict (not measured, failed, or fewer than 3 rounds on a side; `reason` says which). */
  pass: boolean | null;
  durationMs: number;
  /** The Node.js release every process of this outcome ran on (node-lines.ts), e.g. `v24.22.3`. */
  node?: string;
}

export function check(name: string, value: number | null | undefined, kind: 'min' | 'max', limit: number): Check {
  const v = value === undefined || value === null || Number.isNaN(value) ? null : value;
  return { name, value: v, limit, kind, pass: v !== null && (kind === 'min' ? v >= limit : v <= limit) };
}
