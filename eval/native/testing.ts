/**
 * Seeded synthetic data and result comparison for the addon's tests and
 * benchmarks. The vectors are random test data (an index test needs no real
 * embeddings); the comparison tolerates near-tie reordering caused by float32
 * vs double accumulation but nothing else.
 */
import type { ReferenceVectorIndex } from './reference.js';
import type { QueryResult, SearchOptions } from '../../src/native/types.js';
import { OPEN_END } from '../../src/native/args.js';
import { seededRandom } from '../../src/learning/random.js';

export { seededRandom };

/** rows × dimension values uniform in [-1, 1) (or small integers in [-3, 3] for exact-arithmetic tests). */
export function randomMatrix(random: () => number, rows: number, dimension: number, integers = false): Float32Array {
  const out = new Float32Array(rows * dimension);
  for (let i = 0; i < out.length; i++) out[i] = integers ? Math.floor(random() * 7) - 3 : random() * 2 - 1;
  return out;
}

export interface SyntheticRows {
  ids: Uint32Array;
  vectors: Float32Array;
  validFrom: Int32Array;
  validTo: Int32Array;
}

/**
 * Rows with ids spread out of row order and validity intervals over days
 * [0, days): about a third of the rows are closed (validTo set), the rest open.
 */
/**
 * 800 rows of small integers in which every vector appears four times under different ids:
 * products and sums are exact in float32, so ties are everywhere and any difference from
 * the reference is a ranking bug.
 */
export function tiedRows(random: () => number, dimension: number): { ids: Uint32Array; vectors: Float32Array; validFrom: number; validTo: null } {
  const base = syntheticRows(random, 200, dimension, { integers: true, days: 1 });
  const vectors = new Float32Array(800 * dimension);
  for (let copy = 0; copy < 4; copy++) vectors.set(base.vectors, copy * 200 * dimension);
  const ids = Uint32Array.from({ length: 800 }, (_, i) => (i * 7919) % 100003);
  return { ids, vectors, validFrom: 0, validTo: null };
}

/** A prime above every row count the tests and benchmarks use. */
const ID_MODULUS = 1_000_003;

/**
 * Row i's id: a bijection of [0, ID_MODULUS) that is not monotonic in i, so a tie broken by
 * id is told apart from one broken by row position.
 */
export function scatteredId(row: number): number {
  if (row >= ID_MODULUS) throw new RangeError(`scatteredId: row ${row} is beyond ${ID_MODULUS - 1}`);
  return (row * 7919) % ID_MODULUS;
}

export function syntheticRows(random: () => number, count: number, dimension: number, options: { days?: number; integers?: boolean; firstId?: number } = {}): SyntheticRows {
  const days = options.days ?? 100;
  const firstId = options.firstId ?? 0;
  const ids = new Uint32Array(count);
  const validFrom = new Int32Array(count);
  const validTo = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    ids[i] = scatteredId(firstId + i);
    validFrom[i] = Math.floor(random() * days);
    validTo[i] = random() < 1 / 3 ? validFrom[i]! + 1 + Math.floor(random() * days) : OPEN_END;
  }
  return { ids, vectors: randomMatrix(random, count, dimension, options.integers), validFrom, validTo };
}

/**
 * Checks addon results against the reference for the same queries: counts
 * equal; every returned id is a live row valid at that query's asOf and not
 * excluded; its score matches the exact score within `tolerance`; the i-th
 * result is not worse than the reference's i-th beyond tolerance (nothing
 * better was missed); order follows score, then id. Returns the problems found.
 */
export function compareWithReference(
  actual: readonly QueryResult[],
  expected: readonly QueryResult[],
  reference: ReferenceVectorIndex,
  preparedQueries: Float32Array,
  options: SearchOptions,
  tolerance: number,
): string[] {
  const problems: string[] = [];
  if (actual.length !== expected.length) return [`${actual.length} result lists, expected ${expected.length}`];
  for (let q = 0; q < expected.length && problems.length < 20; q++) {
    const got = actual[q]!;
    const want = expected[q]!;
    const asOf = typeof options.asOf === 'number' ? options.asOf : options.asOf[q]!;
    const excluded = new Set<number>(Array.from(options.exclude?.[q] ?? []));
    if (got.ids.length !== want.ids.length) {
      problems.push(`query ${q}: ${got.ids.length} hits, expected ${want.ids.length}`);
      continue;
    }
    const seen = new Set<number>();
    for (let i = 0; i < got.ids.length; i++) {
      const id = got.ids[i]!;
      const score = got.scores[i]!;
      const where = `query ${q} rank ${i} (id ${id})`;
      if (seen.has(id)) problems.push(`${where}: returned twice`);
      seen.add(id);
      if (!reference.isValidAt(id, asOf)) problems.push(`${where}: not a live row valid at index time ${asOf}`);
      if (excluded.has(id)) problems.push(`${where}: excluded id returned`);
      const exact = reference.scoreOf(preparedQueries, q, id);
      if (!(Math.abs(exact - score) <= tolerance)) problems.push(`${where}: score ${score}, exact ${exact}`);
      if (!(exact >= want.scores[i]! - tolerance)) problems.push(`${where}: exact score ${exact} below the reference's ${want.scores[i]} (missed a better row)`);
      if (i > 0) {
        const previousScore = got.scores[i - 1]!;
        if (score > previousScore || (score === previousScore && id < got.ids[i - 1]!)) {
          problems.push(`${where}: out of order after (${got.ids[i - 1]}, ${previousScore})`);
        }
      }
    }
  }
  return problems;
}

/** Exact equality of ids and scores (for inputs whose arithmetic is exact in float32). */
export function compareExactly(actual: readonly QueryResult[], expected: readonly QueryResult[]): string[] {
  const problems: string[] = [];
  if (actual.length !== expected.length) return [`${actual.length} result lists, expected ${expected.length}`];
  actual.forEach((got, q) => {
    const want = expected[q]!;
    const ids = Array.from(got.ids).join(',');
    const wantIds = Array.from(want.ids).join(',');
    if (ids !== wantIds) problems.push(`query ${q}: ids [${ids}], expected [${wantIds}]`);
    const scores = Array.from(got.scores).join(',');
    const wantScores = Array.from(want.scores).join(',');
    if (scores !== wantScores) problems.push(`query ${q}: scores [${scores}], expected [${wantScores}]`);
  });
  return problems;
}
