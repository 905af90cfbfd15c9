import { Fusion } from '../native/index.js';
import { contentTerms, termCoverage } from '../text/language.js';
import type { LexicalRetriever } from './lexicalRetriever.js';
import type { NativeDenseRetriever } from './denseRetriever.js';
import type { RankedUnits, RetrievalQuery, Retriever, RetrieveOptions } from './retriever.js';

/** Hybrid search fuses this many candidates from each side (at least k). */
const FUSION_DEPTH = 30;

/**
 * How hybrid search combines its two lists: `weighted` sums min-max-normalised scores with
 * fixed weights; `rrf` is reciprocal-rank fusion. `adaptive` first judges each query's lexical
 * list (see {@link LexicalEvidence}) and lets it count with `lexicalWeight` only when its top hit
 * holds enough of the question's words, stands out from the second and scores enough per word;
 * otherwise with `weakLexicalWeight`. A question worded unlike the text it asks about leaves
 * BM25 ranking passages by incidental words, and min-max normalisation would lift that off-topic
 * list to full weight.
 */
export interface FusionSettings {
  method: 'weighted' | 'rrf' | 'adaptive';
  denseWeight: number;
  lexicalWeight: number;
  /** RRF's rank constant: 1/(rrfK + rank). Default 60. */
  rrfK?: number;
  /** For `adaptive`: the least coverage of the lexical top hit. Default 1 (every content word). */
  minCoverage?: number;
  /**
   * For `adaptive`: how far BM25's top hit must stand above its second, as a share of its
   * score. Default 0. A template question whose words many passages share gives a flat BM25
   * list that ranks by chance.
   */
  minLexicalMargin?: number;
  /** For `adaptive`: the least BM25 score of the top hit per content word of the question. Default 0. */
  minScorePerTerm?: number;
  /** For `adaptive`: the lexical weight when the list does not count. Default 0 (dense search decides alone). */
  weakLexicalWeight?: number;
}

/**
 * Chosen by `chronoql bench fusion` on the tuning parts of a public QA set (SQuAD dev subset,
 * split by article), the demo fact questions and the paraphrase set, over RRF constants and
 * weights, weighted sums and the adaptive gate's thresholds: the smallest worst shortfall below
 * the better single retriever, then the best mean. Held-out results are in bench/results/README.md.
 */
export const DEFAULT_FUSION: FusionSettings = {
  method: 'adaptive',
  denseWeight: 0.4,
  lexicalWeight: 0.6,
  minCoverage: 0.6,
  minLexicalMargin: 0.05,
  minScorePerTerm: 1,
};

/**
 * How much a query's lexical list is worth, from its top hit: `coverage`, the share of the
 * question's content words the hit's search text (title and text) holds; `margin`, how far its
 * BM25 score stands above the second hit's, as a share of its own; `scorePerTerm`, its BM25
 * score per content word of the question.
 */
export interface LexicalEvidence {
  coverage: number;
  margin: number;
  scorePerTerm: number;
}

export function lexicalEvidence(query: string, lexical: ReadonlyArray<{ score: number; text: string; searchText?: string }>): LexicalEvidence {
  const top = lexical[0];
  if (!top) return { coverage: 0, margin: 0, scorePerTerm: 0 };
  const terms = contentTerms(query);
  return {
    coverage: termCoverage(terms, top.searchText ?? top.text),
    margin: lexical.length > 1 ? (top.score - lexical[1]!.score) / top.score : 1,
    scorePerTerm: top.score / Math.max(terms.size, 1),
  };
}

/**
 * The weights a fusion gives one query's two lists, given its lexical evidence and how many dense
 * candidates it has. Without dense candidates (nothing embedded yet) the lexical list counts
 * whatever its evidence: weighting it 0 would leave every hit at 0, in no order.
 */
export function fusionWeights(fusion: FusionSettings, evidence: LexicalEvidence, denseCandidates: number): { dense: number; lexical: number } {
  if (fusion.method !== 'adaptive' || denseCandidates === 0) return { dense: fusion.denseWeight, lexical: fusion.lexicalWeight };
  const counts =
    evidence.coverage >= (fusion.minCoverage ?? 1) &&
    evidence.margin >= (fusion.minLexicalMargin ?? 0) &&
    evidence.scorePerTerm >= (fusion.minScorePerTerm ?? 0);
  return { dense: fusion.denseWeight, lexical: counts ? fusion.lexicalWeight : (fusion.weakLexicalWeight ?? 0) };
}

/** One query's candidates from one retriever, best first. */
type Candidates<T> = ReadonlyArray<T & { id: string; score: number; text: string; searchText?: string }>;

/** Fuses one query's dense and lexical candidates into one ranking, each item scored by the fusion. */
export async function fuseCandidates<T>(
  query: string,
  dense: Candidates<T>,
  lexical: Candidates<T>,
  fusion: FusionSettings,
): Promise<Array<T & { id: string; score: number; text: string }>> {
  return fuseWithWeights(dense, lexical, fusion, fusionWeights(fusion, lexicalEvidence(query, lexical), dense.length));
}

/** Fuses one query's candidates with the weights its lexical evidence earned (so a benchmark can judge the evidence once per query). */
export async function fuseWithWeights<T>(
  dense: Candidates<T>,
  lexical: Candidates<T>,
  fusion: FusionSettings,
  weights: { dense: number; lexical: number },
): Promise<Array<T & { id: string; score: number; text: string }>> {
  const lists = {
    dense: { ids: dense.map((hit) => hit.id), scores: dense.map((hit) => hit.score) },
    lexical: { ids: lexical.map((hit) => hit.id), scores: lexical.map((hit) => hit.score) },
  };
  const fused =
    fusion.method === 'rrf'
      ? await Fusion.rrf([lists.dense.ids, lists.lexical.ids], { k: fusion.rrfK, weights: [weights.dense, weights.lexical] })
      : await Fusion.weightedSum(lists, weights);
  // The addon breaks ties by id. Exact ties are common at the tail: min-max puts each list's last
  // hit at 0, and a list weighted 0 scores all its hits 0. Order them as the retrievers did instead.
  const [primary, secondary] = weights.lexical > weights.dense ? [lists.lexical.ids, lists.dense.ids] : [lists.dense.ids, lists.lexical.ids];
  const byPrimary = positions(primary);
  const bySecondary = positions(secondary);
  const position = (ranks: Map<string, number>, id: string): number => ranks.get(id) ?? Number.MAX_SAFE_INTEGER;
  fused.sort((a, b) => b.score - a.score || position(byPrimary, a.id) - position(byPrimary, b.id) || position(bySecondary, a.id) - position(bySecondary, b.id));
  const units = new Map([...lexical, ...dense].map((hit) => [hit.id, hit]));
  return fused.map((item) => ({ ...units.get(item.id)!, score: item.score }));
}

function positions(ids: readonly string[]): Map<string, number> {
  return new Map(ids.map((id, i) => [id, i]));
}

/**
 * Dense and lexical search fused into one ranking. The dense side is one batched native call;
 * each query then costs one Neo4j round trip, since its lexical search also loads its dense candidates.
 */
export class HybridRetriever implements Retriever {
  constructor(
    private readonly dense: NativeDenseRetriever,
    private readonly lexical: LexicalRetriever,
    private readonly fusion: FusionSettings,
  ) {}

  async search(queries: readonly RetrievalQuery[], options: RetrieveOptions): Promise<RankedUnits[]> {
    const deep = { ...options, k: Math.max(options.k, FUSION_DEPTH) };
    const rows = await this.dense.candidateRows(queries, deep);
    return Promise.all(
      queries.map(async (query, q) => {
        const { hits, loaded } = await this.lexical.searchLoading(
          query.text,
          deep,
          rows[q]!.map((row) => row.rowId),
        );
        const dense = await this.dense.validUnits(query, rows[q]!, loaded, deep);
        return { ranking: await fuseCandidates(query.text, dense, hits, this.fusion), dense, lexical: hits };
      }),
    );
  }
}
