import type { Embedder } from '../embedding/index.js';
import { deepenUntilEnoughValid, indexStart, isValidAt } from '../domain/time.js';
import type { RetrievalRepository, ScoredUnit, UnitRecord } from '../graph/retrievalRepository.js';
import { MAX_K } from '../native/index.js';
import { queryVectors } from './queryVectors.js';
import {
  queryTerms,
  SearchUnit,
  toSearchHits,
  UNIT_LABEL,
  type RankedUnits,
  type RetrievalQuery,
  type Retriever,
  type RetrieveOptions,
  type SearchHit,
} from './retriever.js';
import type { UnitVectorIndex } from './unitIndex.js';

/** Dense candidates asked of the native index beyond the depth needed, for hits the exact validity check drops. */
const VALIDITY_MARGIN = 16;

/** A nearest neighbour from the native index: a unit's row number and its similarity. */
export interface DenseRow {
  rowId: number;
  score: number;
}

/** One question of an adaptive re-retrieval batch. */
export interface ReRetrievalRequest {
  question: string;
  /** The first round's answer y. */
  answer: string;
  /** ω: how far the query moves from E(Q) toward E([Q : y]), clamped to [0, 1]. */
  omega: number;
  /** Row ids of the first round's passages, which the second round must not return. */
  excludeRowIds: readonly number[];
  /** E(Q) when the caller has it from this store's embedder (see SearchOptions.queryVectors). */
  questionVector?: Float32Array | null;
}

/**
 * Exact search over the native vector index, time-filtered in the kernel to the minute, then
 * checked against asOf to the instant. A whole batch of queries is one native call.
 */
export class NativeDenseRetriever implements Retriever {
  constructor(
    private readonly repository: RetrievalRepository,
    private readonly embedder: Embedder,
    private readonly index: (unit: SearchUnit) => Promise<UnitVectorIndex>,
  ) {}

  async search(queries: readonly RetrievalQuery[], options: RetrieveOptions): Promise<RankedUnits[]> {
    const rows = await this.candidateRows(queries, options);
    const units = await this.repository.unitsByRowIds(UNIT_LABEL[options.unit], [...new Set(rows.flat().map((row) => row.rowId))]);
    return Promise.all(
      queries.map(async (query, q) => {
        const dense = await this.validUnits(query, rows[q]!, units, options);
        return { ranking: dense, dense };
      }),
    );
  }

  /** Each query's nearest rows from the native index, `k` plus a margin for those the exact validity check will drop. */
  async candidateRows(queries: readonly RetrievalQuery[], options: RetrieveOptions): Promise<DenseRow[][]> {
    return this.nearestRows(queries, options.unit, options.asOf, options.k + VALIDITY_MARGIN);
  }

  /**
   * One query's `k` units valid at asOf among its candidate rows (their units in `units`).
   * Versions whose valid time ends or starts within asOf's minute pass the native index and are
   * dropped here; when so many were dropped that fewer than k remain of a full page, the query is
   * searched again, deeper, by the time model's one policy.
   */
  async validUnits(query: RetrievalQuery, rows: readonly DenseRow[], units: ReadonlyMap<number, UnitRecord>, options: RetrieveOptions): Promise<ScoredUnit[]> {
    const requested = options.k + VALIDITY_MARGIN;
    const valid = validOf(rows, units, options.asOf);
    if (valid.length >= options.k || rows.length < requested) return valid.slice(0, options.k);
    return deepenUntilEnoughValid(options.k, { first: requested * 4, limit: MAX_K }, async (candidates) => {
      const deeper = (await this.nearestRows([query], options.unit, options.asOf, candidates))[0]!;
      const found = validOf(
        deeper,
        await this.repository.unitsByRowIds(
          UNIT_LABEL[options.unit],
          deeper.map((row) => row.rowId),
        ),
        options.asOf,
      );
      return { result: found.slice(0, options.k), valid: found.length, scanned: deeper.length };
    });
  }

  /**
   * GrowOVER's adaptive re-retrieval for a batch of questions, in one native scan: passages
   * ranked by (1-ω)·sim(E(Q), E(D)) + ω·sim(E([Q : y]), E(D)), where y is the first round's
   * answer, leaving out the first round's passages. Hits are checked against asOf to the instant.
   */
  async reRetrieve(requests: readonly ReRetrievalRequest[], asOf: Date, k: number): Promise<SearchHit[][]> {
    if (requests.length === 0) return [];
    const index = await this.index(SearchUnit.PASSAGE);
    const d = this.embedder.dimension;
    const questions = await queryVectors(
      this.embedder,
      requests.map((request) => queryTerms(request.question)),
      requests.map((request) => request.questionVector ?? null),
    );
    const withAnswers = await this.embedder.embed(
      requests.map((request) => queryTerms(`${request.question} : ${request.answer}`)),
      'query',
    );
    const first = new Float32Array(requests.length * d);
    const second = new Float32Array(requests.length * d);
    requests.forEach((_, q) => {
      if (questions[q]) first.set(questions[q]!, q * d);
      second.set(withAnswers.subarray(q * d, (q + 1) * d), q * d);
    });
    const results =
      index.size === 0
        ? requests.map(() => ({ ids: new Uint32Array(), scores: new Float32Array() }))
        : await index.searchArr(
            first,
            second,
            Float32Array.from(requests, (request) => Math.min(1, Math.max(0, request.omega))),
            Math.min(k + VALIDITY_MARGIN, MAX_K),
            new Int32Array(requests.length).fill(indexStart(asOf)),
            requests.map((request) => Uint32Array.from(request.excludeRowIds)),
          );
    const rows = results.map((result) => Array.from(result.ids, (rowId, i) => ({ rowId, score: result.scores[i]! })));
    const units = await this.repository.unitsByRowIds(UNIT_LABEL[SearchUnit.PASSAGE], [...new Set(rows.flat().map((row) => row.rowId))]);
    return rows.map((list) => {
      const valid = validOf(list, units, asOf).slice(0, k);
      return toSearchHits({ ranking: valid, dense: valid }, SearchUnit.PASSAGE, k);
    });
  }

  /** Row numbers and scores of each query's `k` nearest units valid at asOf's minute. */
  private async nearestRows(queries: readonly RetrievalQuery[], unit: SearchUnit, asOf: Date, k: number): Promise<DenseRow[][]> {
    const index = await this.index(unit);
    const vectors = await queryVectors(
      this.embedder,
      queries.map((query) => query.text),
      queries.map((query) => query.vector ?? null),
    );
    const answerable = vectors.flatMap((vector, q) => (vector ? [q] : []));
    const results =
      answerable.length === 0 || index.size === 0
        ? []
        : await index.search(
            Float32Array.from(answerable.flatMap((q) => Array.from(vectors[q]!))),
            Math.min(k, MAX_K),
            new Int32Array(answerable.length).fill(indexStart(asOf)),
          );
    const rankings: DenseRow[][] = queries.map(() => []);
    answerable.forEach((q, position) => {
      const result = results[position];
      if (result) rankings[q] = Array.from(result.ids, (rowId, i) => ({ rowId, score: result.scores[i]! }));
    });
    return rankings;
  }
}

/** Dense rows with their units, valid at asOf to the instant; a row whose unit is gone (the store was emptied) is dropped. */
function validOf(rows: readonly DenseRow[], units: ReadonlyMap<number, UnitRecord>, asOf: Date): ScoredUnit[] {
  return rows.flatMap(({ rowId, score }) => {
    const unit = units.get(rowId);
    return unit && isValidAt(unit, asOf) ? [{ ...unit, score }] : [];
  });
}
