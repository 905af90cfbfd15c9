import { factQuestions } from './factQuestions.js';
import { countNodes } from '../src/graph/maintenance.js';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { splitSentences } from '../src/ingest/sentenceSplitter.js';
import { readSnapshotFile, type ArticleInput } from '../src/ingest/snapshotReader.js';
import { SearchMode } from '../src/retrieval/retriever.js';
import { loadConfig } from '../src/app/config.js';
import { startServer } from '../src/api/server.js';
import { createLogger } from '../src/platform/logger.js';
import { machine, openBenchRuntime, percentile, writeResult } from './common.js';
import { seeded } from './ingest.js';

const PARAGRAPHS = 4;
const SENTENCES_PER_PARAGRAPH = 2;
const WARM_UP_REQUESTS = 200;

/**
 * A corpus of about `passages` passages made of real sentences: the demo corpus's sentences
 * recombined, four two-sentence paragraphs (one passage each) per article.
 */
export function recombinedCorpus(pool: string[], passages: number): ArticleInput[] {
  const random = seeded(7);
  const pick = (): string => pool[Math.floor(random() * pool.length)]!;
  return Array.from({ length: Math.ceil(passages / PARAGRAPHS) }, (_, a) => {
    const paragraphs = Array.from({ length: PARAGRAPHS }, () => Array.from({ length: SENTENCES_PER_PARAGRAPH }, pick).join(' '));
    return { id: `Recombined ${a}`, title: `Recombined ${a}`, text: paragraphs.join('\n\n'), infobox: {} };
  });
}

const QUERY = `query Search($query: String!, $mode: SearchMode!) { search(query: $query, k: 10, mode: $mode) { id score } }`;

/** Single-request `search` latency per mode over HTTP, and the ingest-time embedding throughput. */
export async function runRetrievalLatencyBenchmark(options: { passages: number; requests: number }): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime();
  const server = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('warn') });
  try {
    const pool = new Set<string>();
    const questions: string[] = [];
    for (const snapshot of await demoSnapshots()) {
      const articles = await readSnapshotFile(snapshot.file);
      for (const article of articles) for (const sentence of splitSentences(article.text)) pool.add(sentence.text);
      questions.push(...factQuestions(articles, snapshot.takenAt).map((item) => item.question));
    }
    const corpus = recombinedCorpus([...pool], options.passages);
    const ingestStarted = performance.now();
    await runtime.services.ingest.ingest(corpus, { takenAt: new Date('2024-01-01T00:00:00Z'), source: 'bench', batchSize: 500 });
    const ingestSeconds = (performance.now() - ingestStarted) / 1000;
    const embedStarted = performance.now();
    const { embedded } = await runtime.services.retrieval.catchUp();
    const embedSeconds = (performance.now() - embedStarted) / 1000;
    const passageCount = await countNodes(runtime.services.db, 'Passage');

    const ask = async (query: string, mode: SearchMode): Promise<number> => {
      const started = performance.now();
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: QUERY, variables: { query, mode } }),
      });
      const body = (await response.json()) as { errors?: unknown };
      if (body.errors) throw new Error(`search failed: ${JSON.stringify(body.errors)}`);
      return performance.now() - started;
    };
    const latency: Record<string, { p50Ms: number; p99Ms: number; meanMs: number }> = {};
    const modes = [SearchMode.HYBRID, SearchMode.DENSE, SearchMode.LEXICAL, SearchMode.NEO4J_VECTOR];
    // Every mode is warmed up before any is timed: Neo4j compiles and JITs its statements and
    // warms Lucene's files on first use, and otherwise the first mode timed pays for it.
    for (const mode of modes) for (let i = 0; i < WARM_UP_REQUESTS; i += 1) await ask(questions[i % questions.length]!, mode);
    for (const mode of modes) {
      const timings: number[] = [];
      for (let i = 0; i < options.requests; i += 1) timings.push(await ask(questions[(i * 7919) % questions.length]!, mode));
      timings.sort((a, b) => a - b);
      latency[mode] = {
        p50Ms: Number(percentile(timings, 50).toFixed(2)),
        p99Ms: Number(percentile(timings, 99).toFixed(2)),
        meanMs: Number((timings.reduce((sum, t) => sum + t, 0) / timings.length).toFixed(2)),
      };
    }
    const result = {
      benchmark: 'retrieval-latency',
      machine: machine(),
      embedder: runtime.services.retrieval.embedderId,
      passages: passageCount,
      unitsEmbedded: embedded,
      ingestSeconds: Number(ingestSeconds.toFixed(1)),
      embedSeconds: Number(embedSeconds.toFixed(1)),
      embeddedUnitsPerSecond: Math.round(embedded / embedSeconds),
      ingestToSearchableSeconds: Number((ingestSeconds + embedSeconds).toFixed(1)),
      requestsPerMode: options.requests,
      latency,
    };
    // One file per corpus size, so measuring one size keeps the others' results.
    await writeResult(`retrieval-latency-${options.passages}`, result);
    return result;
  } finally {
    await server.close();
    await runtime.close();
  }
}
