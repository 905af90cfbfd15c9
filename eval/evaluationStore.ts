import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { loadConfig } from '../src/app/config.js';
import type { Logger } from '../src/platform/logger.js';
import { openRuntime, type Runtime } from '../src/app/runtime.js';
import type { ArticleInput } from '../src/ingest/snapshotReader.js';
import {
  contextsAsCorpus,
  EVALUATED_MODES,
  evaluateRetrieval,
  readQaFile,
  serviceSearch,
  splitByArticle,
  type EvaluatedSearch,
  type QaItem,
  type RetrievalScores,
} from './qaFile.js';
import { SearchUnit } from '../src/retrieval/retriever.js';

/** Before any question's date, so a QA set loaded as its own corpus is valid whenever it is asked. */
const CORPUS_DATE = new Date('1970-01-02T00:00:00.000Z');

export interface EvaluationOptions {
  unit: 'PASSAGE' | 'SENTENCE';
  contextsAsCorpus: boolean;
  split: 'tune' | 'held-out' | 'all';
  /** Write the contexts as a snapshot file for `chronoql ingest` instead of evaluating. */
  writeCorpus?: string;
  /** Evaluate a running server over GraphQL (`batchSearch`) instead of a store opened here. */
  endpoint?: string;
  log: Logger;
}

function table(rows: Array<[string, RetrievalScores]>): string {
  const format = (x: number): string => x.toFixed(3);
  return [
    '| mode | questions | Recall@1 | Recall@5 | Recall@20 | MRR@20 |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      ([mode, s]) => `| ${mode} | ${s.questions} | ${format(s.recallAt1)} | ${format(s.recallAt5)} | ${format(s.recallAt20)} | ${format(s.mrrAt20)} |`,
    ),
  ].join('\n');
}

/** `batchSearch` of a ChronoQL server, as an EvaluatedSearch. */
function endpointSearch(endpoint: string): EvaluatedSearch {
  return async (questions, options) => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `query($queries: [String!]!, $asOf: DateTime, $k: Int!, $mode: SearchMode!, $unit: SearchUnit!) {
          batchSearch(queries: $queries, asOf: $asOf, k: $k, mode: $mode, unit: $unit) { text article { id } } }`,
        variables: { queries: questions, ...options, asOf: options.asOf.toISOString() },
      }),
    });
    const body = (await response.json()) as { data?: { batchSearch: Array<Array<{ text: string; article: { id: string } }>> }; errors?: unknown };
    if (!body.data) throw new Error(`${endpoint} answered ${response.status}: ${JSON.stringify(body.errors)}`);
    return body.data.batchSearch.map((hits) => hits.map((hit) => ({ text: hit.text, articleId: hit.article.id })));
  };
}

async function scoreModes(search: EvaluatedSearch, items: QaItem[], unit: SearchUnit): Promise<string> {
  const rows: Array<[string, RetrievalScores]> = [];
  for (const mode of EVALUATED_MODES) rows.push([mode, await evaluateRetrieval(search, items, { mode, unit, defaultAsOf: new Date() })]);
  return table(rows);
}

/**
 * `chronoql eval-retrieval`: scores every search mode on a QA file (or one half of it, split by
 * article), against the configured store, a running server (`endpoint`), or (contexts as
 * corpus) the items' own contexts loaded into a separate, emptied data directory so the user's
 * data is never touched.
 */
export async function evaluateQaFile(path: string, options: EvaluationOptions): Promise<string> {
  let items = await readQaFile(path);
  const unit = SearchUnit[options.unit];
  const corpus = options.contextsAsCorpus ? contextsAsCorpus(items) : null;
  if (corpus) {
    items = corpus.items;
    if (options.writeCorpus) {
      await writeFile(options.writeCorpus, corpus.articles.map((article) => JSON.stringify(article)).join('\n') + '\n');
      return `wrote ${corpus.articles.length} contexts of ${items.length} questions to ${options.writeCorpus} (ingest them with \`chronoql ingest\`)`;
    }
  }
  items = splitByArticle(items, options.split);
  if (options.endpoint) return scoreModes(endpointSearch(options.endpoint), items, unit);
  return withEvaluationStore(corpus && corpusSnapshots(path, corpus.articles), options.log, (runtime) =>
    scoreModes(serviceSearch(runtime.services.retrieval), items, unit),
  );
}

/** A dated snapshot of an evaluation store. */
export interface EvaluationSnapshot {
  takenAt: Date;
  source: string;
  articles: ArticleInput[];
}

/** A QA file's contexts as one snapshot, dated before any question. */
export function corpusSnapshots(source: string, articles: ArticleInput[]): EvaluationSnapshot[] {
  return [{ takenAt: CORPUS_DATE, source: `eval:${basename(source)}`, articles }];
}

/**
 * Runs `work` on the configured store, or on the given snapshots alone, in a data directory of
 * their own under .chronoql-eval, named by their content: the user's data is never touched, and a
 * second run finds them ingested and embedded already (an ingest of the same snapshot changes nothing).
 */
export async function withEvaluationStore<T>(snapshots: EvaluationSnapshot[] | null, log: Logger, work: (runtime: Runtime) => Promise<T>): Promise<T> {
  const content = snapshots && createHash('sha256').update(JSON.stringify(snapshots)).digest('hex').slice(0, 16);
  const env = content ? { ...process.env, NEO4J_URI: '', CHRONOQL_DATA_DIR: join(process.cwd(), '.chronoql-eval', content) } : process.env;
  const runtime = await openRuntime(loadConfig(env), log);
  try {
    for (const snapshot of snapshots ?? []) await runtime.services.ingest.ingest(snapshot.articles, { takenAt: snapshot.takenAt, source: snapshot.source });
    await runtime.services.retrieval.catchUp();
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}
