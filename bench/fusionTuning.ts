import { contextsAsCorpus, isRelevant, readQaFile, splitByArticle, type QaItem } from '../eval/qaFile.js';
import { fusionWeights, fuseWithWeights, lexicalEvidence, type FusionSettings, type LexicalEvidence } from '../src/retrieval/fusion.js';
import { queryTerms, SearchMode, SearchUnit, type SearchHit } from '../src/retrieval/retriever.js';
import { type RetrievalService } from '../src/retrieval/retrievalService.js';
import { deleteAllKnowledge } from '../src/graph/maintenance.js';
import { loadDemoCorpus } from './retrievalEval.js';
import { machine, openBenchRuntime, writeResult } from './common.js';

/** Candidates per retriever, as hybrid search fuses them (FUSION_DEPTH). */
const DEPTH = 30;
const BATCH = 64;
const CORPUS_DATE = new Date('1970-01-02T00:00:00.000Z');
/** The paraphrase set's first two passes (data/eval/README.md); the third is its held-out check. */
const PARAPHRASE_TUNING_LINES = 179;

interface Scores {
  recallAt5: number;
  mrrAt20: number;
}

/**
 * Each question's dense and lexical candidate lists, fetched once and fused offline for every
 * setting, with its lexical evidence and, per fusion method and weights, the rank of its first
 * relevant fused hit (many settings differ only in which weights a question earns).
 */
interface QuestionLists {
  item: QaItem;
  dense: SearchHit[];
  lexical: SearchHit[];
  evidence: LexicalEvidence;
  firstRelevant: Map<string, number>;
}

async function fetchLists(retrieval: RetrievalService, items: QaItem[], defaultAsOf: Date): Promise<QuestionLists[]> {
  const lists: QuestionLists[] = [];
  for (let start = 0; start < items.length; start += BATCH) {
    const batch = items.slice(start, start + BATCH);
    for (const asOf of new Set(batch.map((item) => (item.asOf ?? defaultAsOf).getTime()))) {
      const group = batch.filter((item) => (item.asOf ?? defaultAsOf).getTime() === asOf);
      const options = { asOf: new Date(asOf), k: DEPTH, unit: SearchUnit.PASSAGE };
      const questions = group.map((item) => item.question);
      const dense = await retrieval.batchSearch(questions, { ...options, mode: SearchMode.DENSE });
      const lexical = await retrieval.batchSearch(questions, { ...options, mode: SearchMode.LEXICAL });
      group.forEach((item, i) =>
        lists.push({
          item,
          dense: dense[i]!,
          lexical: lexical[i]!,
          evidence: lexicalEvidence(queryTerms(item.question), lexical[i]!),
          firstRelevant: new Map(),
        }),
      );
    }
  }
  return lists;
}

/** The 0-based rank of the first relevant hit among the top 20, or -1. */
function firstRelevant(item: QaItem, ranking: ReadonlyArray<Pick<SearchHit, 'articleId' | 'text'>>): number {
  return ranking.slice(0, 20).findIndex((hit) => isRelevant(item, hit));
}

function score(firstRanks: number[]): Scores {
  let recallAt5 = 0;
  let mrrAt20 = 0;
  for (const first of firstRanks) {
    if (first < 0) continue;
    if (first < 5) recallAt5 += 1;
    mrrAt20 += 1 / (first + 1);
  }
  const n = Math.max(firstRanks.length, 1);
  return { recallAt5: Number((recallAt5 / n).toFixed(4)), mrrAt20: Number((mrrAt20 / n).toFixed(4)) };
}

/** Scores a fusion exactly as hybrid search applies it: the weights each question's evidence earns, then the fused ranking. */
async function fusedScores(lists: QuestionLists[], fusion: FusionSettings): Promise<Scores> {
  const ranks: number[] = [];
  for (const entry of lists) {
    const weights = fusionWeights(fusion, entry.evidence, entry.dense.length);
    const key = `${fusion.method} ${fusion.rrfK ?? ''} ${weights.dense} ${weights.lexical}`;
    let rank = entry.firstRelevant.get(key);
    if (rank === undefined) {
      rank = firstRelevant(entry.item, await fuseWithWeights(entry.dense, entry.lexical, fusion, weights));
      entry.firstRelevant.set(key, rank);
    }
    ranks.push(rank);
  }
  return score(ranks);
}

const round = (value: number): number => Number(value.toFixed(2));

/**
 * The settings tried: reciprocal-rank fusion over its constant and weights, min-max weighted
 * sums, and the adaptive gate over its three thresholds and two lexical weights.
 */
function candidates(): Array<{ name: string; fusion: FusionSettings }> {
  const found: Array<{ name: string; fusion: FusionSettings }> = [];
  const weights = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
  for (const rrfK of [1, 2, 5, 10, 20, 60]) {
    for (const lexicalWeight of weights) {
      found.push({ name: `rrf k=${rrfK} lexical=${lexicalWeight}`, fusion: { method: 'rrf', rrfK, lexicalWeight, denseWeight: round(1 - lexicalWeight) } });
    }
  }
  for (const lexicalWeight of weights) {
    found.push({ name: `weighted lexical=${lexicalWeight}`, fusion: { method: 'weighted', lexicalWeight, denseWeight: round(1 - lexicalWeight) } });
  }
  for (const lexicalWeight of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) {
    for (const weakLexicalWeight of [0, 0.1, 0.2, 0.3].filter((weak) => weak < lexicalWeight)) {
      for (const minCoverage of [0, 0.25, 0.4, 0.5, 0.6, 0.75, 0.85, 1]) {
        for (const minLexicalMargin of [0, 0.05, 0.1, 0.2]) {
          for (const minScorePerTerm of [0, 0.75, 1, 1.25, 1.5]) {
            found.push({
              name: `adaptive coverage>=${minCoverage} margin>=${minLexicalMargin} score/term>=${minScorePerTerm} lexical=${lexicalWeight} else ${weakLexicalWeight}`,
              fusion: {
                method: 'adaptive',
                minCoverage,
                minLexicalMargin,
                minScorePerTerm,
                lexicalWeight,
                denseWeight: round(1 - lexicalWeight),
                weakLexicalWeight,
              },
            });
          }
        }
      }
    }
  }
  return found;
}

interface EvaluationSet {
  name: string;
  tune: QuestionLists[];
  heldOut: QuestionLists[];
}

type Part = 'tune' | 'heldOut';

/** Each part's single-retriever scores, computed once for all the settings tried. */
const singleScores = new WeakMap<QuestionLists[], { dense: Scores; lexical: Scores }>();

function singles(lists: QuestionLists[]): { dense: Scores; lexical: Scores } {
  let found = singleScores.get(lists);
  if (!found) {
    found = {
      dense: score(lists.map((entry) => firstRelevant(entry.item, entry.dense))),
      lexical: score(lists.map((entry) => firstRelevant(entry.item, entry.lexical))),
    };
    singleScores.set(lists, found);
  }
  return found;
}

/** How far a fusion falls below the better single retriever on one set's part (0 when it does not), on either measure. */
async function shortfall(
  set: EvaluationSet,
  part: Part,
  fusion: FusionSettings,
): Promise<{ scores: Scores; dense: Scores; lexical: Scores; best: Scores; deficit: number }> {
  const lists = set[part];
  const { dense, lexical } = singles(lists);
  const best = { recallAt5: Math.max(dense.recallAt5, lexical.recallAt5), mrrAt20: Math.max(dense.mrrAt20, lexical.mrrAt20) };
  const scores = await fusedScores(lists, fusion);
  return { scores, dense, lexical, best, deficit: Math.max(0, best.recallAt5 - scores.recallAt5, best.mrrAt20 - scores.mrrAt20) };
}

/**
 * Chooses the hybrid fusion on the tuning parts of three QA sets and reports it on their
 * held-out parts. The sets: a public QA set (its contexts as the corpus, split by article), and
 * on the demo corpus the template fact questions (split by article) and the hand-written
 * paraphrase set (passes 1–2 tune, pass 3 held out). Every question's dense and lexical top-30
 * are fetched once; each candidate fuses them exactly as hybrid search does. The choice: the
 * smallest worst shortfall below the better single retriever over the three tuning parts, then
 * the best mean MRR@20 + Recall@5.
 */
export async function runFusionTuning(options: { qa: string }): Promise<Record<string, unknown>> {
  const sets: EvaluationSet[] = [];
  const runtime = await openBenchRuntime();
  try {
    const publicSet = contextsAsCorpus(await readQaFile(options.qa));
    await runtime.services.ingest.ingest(publicSet.articles, { takenAt: CORPUS_DATE, source: 'bench' });
    await runtime.services.retrieval.catchUp();
    const now = new Date();
    sets.push({
      name: options.qa.split('/').pop()!,
      tune: await fetchLists(runtime.services.retrieval, splitByArticle(publicSet.items, 'tune'), now),
      heldOut: await fetchLists(runtime.services.retrieval, splitByArticle(publicSet.items, 'held-out'), now),
    });
    await deleteAllKnowledge(runtime.services.db);
    const demo = await loadDemoCorpus(runtime);
    sets.push({
      name: 'demo fact questions',
      tune: await fetchLists(runtime.services.retrieval, splitByArticle(demo.facts, 'tune'), demo.latest),
      heldOut: await fetchLists(runtime.services.retrieval, splitByArticle(demo.facts, 'held-out'), demo.latest),
    });
    sets.push({
      name: 'paraphrase set',
      tune: await fetchLists(runtime.services.retrieval, demo.paraphrases.slice(0, PARAPHRASE_TUNING_LINES), demo.latest),
      heldOut: await fetchLists(runtime.services.retrieval, demo.paraphrases.slice(PARAPHRASE_TUNING_LINES), demo.latest),
    });
    const tried: Array<{ name: string; fusion: FusionSettings; worstShortfall: number; meanMrrPlusRecall: number; tune: Record<string, Scores> }> = [];
    for (const candidate of candidates()) {
      const perSet = await Promise.all(sets.map((set) => shortfall(set, 'tune', candidate.fusion)));
      const worst = Math.max(...perSet.map((entry) => entry.deficit));
      const mean = perSet.reduce((sum, entry) => sum + entry.scores.mrrAt20 + entry.scores.recallAt5, 0) / perSet.length;
      tried.push({
        ...candidate,
        worstShortfall: Number(worst.toFixed(4)),
        meanMrrPlusRecall: Number(mean.toFixed(4)),
        tune: Object.fromEntries(sets.map((set, i) => [set.name, perSet[i]!.scores])),
      });
    }
    tried.sort((a, b) => a.worstShortfall - b.worstShortfall || b.meanMrrPlusRecall - a.meanMrrPlusRecall);
    const chosen = tried[0]!;
    const summary = ({ name, worstShortfall, meanMrrPlusRecall, tune }: (typeof tried)[number]): Record<string, unknown> => ({
      name,
      worstShortfall,
      meanMrrPlusRecall,
      tune,
    });
    const report = async (part: Part) =>
      Object.fromEntries(
        await Promise.all(
          sets.map(async (set) => {
            const { scores, dense, lexical, best, deficit } = await shortfall(set, part, chosen.fusion);
            return [
              set.name,
              { questions: set[part].length, HYBRID: scores, DENSE: dense, LEXICAL: lexical, bestSingle: best, shortfall: Number(deficit.toFixed(4)) },
            ];
          }),
        ),
      );
    const result = {
      benchmark: 'fusion-tuning',
      machine: machine(),
      embedder: runtime.services.retrieval.embedderId,
      split: {
        [sets[0]!.name]: 'contexts as corpus; by article, alternating in order of first appearance: tune = 1st, 3rd, ... title; held-out = 2nd, 4th, ...',
        'demo fact questions': 'by article, alternating as above',
        'paraphrase set': `lines 1-${PARAPHRASE_TUNING_LINES} tune (passes 1 and 2), the rest held out (pass 3)`,
      },
      chosen: { name: chosen.name, fusion: chosen.fusion, tune: await report('tune'), heldOut: await report('heldOut') },
      triedOnTuningParts: {
        settings: tried.length,
        best: tried.slice(0, 25).map(summary),
        bestPerMethod: Object.fromEntries(
          ['rrf', 'weighted', 'adaptive'].map((method) => [method, summary(tried.find((entry) => entry.fusion.method === method)!)]),
        ),
      },
    };
    await writeResult('fusion-tuning', result);
    return result;
  } finally {
    await runtime.close();
  }
}
