/**
 * `ask` latency per retrieval mode (single requests over HTTP) and `batchAsk` throughput, with
 * the share of time per pipeline stage, on the demo corpus or on a synthetic corpus of
 * recombined demo sentences. Questions: the demo corpus's generated fact questions, at their dates;
 * and, timed apart, the plain demo questions that name a time ("in 2024", "from 2005 to 2007"),
 * whose period is read in the text (issue 31): the generated ones name none.
 */
import { join } from 'node:path';
import { readQaFile } from '../eval/qaFile.js';
import { projectRoot } from '../src/platform/paths.js';
import { readTimeScope, TimeScopeKind } from '../src/qa/timeScope.js';
import { generateQuestions } from '../src/benchmarks/questionGeneration.js';
import { AnsweringRepository } from '../src/graph/answeringRepository.js';
import { countNodes } from '../src/graph/maintenance.js';
import { SnapshotRepository } from '../src/graph/snapshotRepository.js';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { splitSentences } from '../src/ingest/sentenceSplitter.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { RetrievalMode, type StageTimings } from '../src/qa/types.js';
import { loadConfig } from '../src/app/config.js';
import { startServer } from '../src/api/server.js';
import { createLogger } from '../src/platform/logger.js';
import { machine, openBenchRuntime, percentile, writeResult } from './common.js';
import { recombinedCorpus } from './retrievalLatency.js';

/** First requests, timed for the reader's cost before its passages are cached. */
const COLD_REQUESTS = 50;
const BATCH_SIZE = 64;
const MODES = [RetrievalMode.NEVER, RetrievalMode.ALWAYS, RetrievalMode.GATED, RetrievalMode.RILM, RetrievalMode.ADAPTIVE];
const STAGES = ['decisionMs', 'retrievalMs', 'generationMs', 'gateMs', 'reRetrievalMs'] as const;

const ASK = `query Ask($q: String!, $asOf: DateTime, $mode: RetrievalMode!) { ask(question: $q, asOf: $asOf, retrieval: $mode) { text timings { ${STAGES.join(' ')} totalMs } } }`;
const BATCH = `query Batch($qs: [AskInput!]!) { batchAsk(questions: $qs) { text timings { ${STAGES.join(' ')} totalMs } } }`;

interface Question {
  question: string;
  asOf: string;
}

/** Time scopes that name a time of the world, read in the text; not "currently", nor the value before or after another. */
const NAMED_TIME = new Set([TimeScopeKind.AT, TimeScopeKind.DURING, TimeScopeKind.BEFORE, TimeScopeKind.AFTER, TimeScopeKind.SINCE]);

/** The plain demo questions (data/eval, written as people ask) that name a time, each at its own asOf. */
async function questionsNamingATime(): Promise<Question[]> {
  const items = await readQaFile(join(projectRoot(), 'data', 'eval', 'plain-questions-tune.jsonl'));
  const named = items
    .map((item) => ({ question: item.question, asOf: item.asOf ?? new Date() }))
    .filter(({ question, asOf }) => NAMED_TIME.has(readTimeScope(question, asOf)?.kind as TimeScopeKind))
    .map(({ question, asOf }) => ({ question, asOf: asOf.toISOString() }));
  if (named.length === 0) throw new Error('data/eval/plain-questions-tune.jsonl holds no question that names a time');
  return named;
}

function shares(timings: StageTimings[]): Record<string, number> {
  const total = timings.reduce((sum, t) => sum + STAGES.reduce((s, stage) => s + t[stage], 0), 0);
  return Object.fromEntries(
    STAGES.map((stage) => [stage.replace(/Ms$/, ''), Number((timings.reduce((sum, t) => sum + t[stage], 0) / Math.max(total, 1e-9)).toFixed(3))]),
  );
}

export async function runAskBenchmark(options: { corpus: 'demo' | 'synthetic'; passages: number; requests: number }): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime();
  const server = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('warn') });
  try {
    const snapshots = await demoSnapshots();
    const pool = new Set<string>();
    for (const snapshot of snapshots) {
      const articles = await readSnapshotFile(snapshot.file);
      await runtime.services.ingest.ingest(articles, { takenAt: snapshot.takenAt, source: snapshot.source });
      for (const article of articles) for (const sentence of splitSentences(article.text)) pool.add(sentence.text);
    }
    // The questions come from the demo facts; the synthetic corpus is then added beside them (as of the last demo date).
    const generated = await generateQuestions(new AnsweringRepository(runtime.services.db), await new SnapshotRepository(runtime.services.db).list());
    const questions: Question[] = generated.map((item) => ({ question: item.question, asOf: item.asOf }));
    if (options.corpus === 'synthetic') {
      const last = snapshots[snapshots.length - 1]!.takenAt;
      await runtime.services.ingest.ingest(recombinedCorpus([...pool], options.passages), {
        takenAt: new Date(last.getTime() + 86_400_000),
        source: 'bench',
        batchSize: 500,
      });
    }
    const embedStarted = performance.now();
    await runtime.services.retrieval.catchUp();
    const embedSeconds = (performance.now() - embedStarted) / 1000;

    const post = async (query: string, variables: Record<string, unknown>): Promise<{ data: any; ms: number }> => {
      const started = performance.now();
      const response = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
      const body = (await response.json()) as { data?: unknown; errors?: unknown };
      if (body.errors) throw new Error(`ask failed: ${JSON.stringify(body.errors)}`);
      return { data: body.data, ms: performance.now() - started };
    };
    const pick = (i: number): Question => questions[(i * 7919) % questions.length]!;
    // The reader's cost before anything is cached: every passage read for the first time.
    const reader = runtime.services.reader;
    const cold = { questions: 0, generationMs: 0, totalMs: 0, encoderPasses: reader.cost.encoderPasses };
    for (let i = 0; i < COLD_REQUESTS; i++) {
      const { data } = await post(ASK, { q: pick(i).question, asOf: pick(i).asOf, mode: RetrievalMode.GATED });
      cold.generationMs += data.ask.timings.generationMs;
      cold.totalMs += data.ask.timings.totalMs;
      cold.questions++;
    }
    const readerCold = {
      questions: cold.questions,
      generationMsPerQuestion: Number((cold.generationMs / cold.questions).toFixed(2)),
      totalMsPerQuestion: Number((cold.totalMs / cold.questions).toFixed(2)),
      encoderPassesPerQuestion: Number(((reader.cost.encoderPasses - cold.encoderPasses) / cold.questions).toFixed(2)),
    };
    const timed = async (asked: (i: number) => Question, mode: RetrievalMode): Promise<Record<string, unknown>> => {
      // Steady state: every passage the timed requests read, in either round, has been read once (a first read is the cold cost above).
      for (let i = 0; i < options.requests; i++) await post(ASK, { q: asked(i).question, asOf: asked(i).asOf, mode });
      const latencies: number[] = [];
      const stageTimings: StageTimings[] = [];
      for (let i = 0; i < options.requests; i++) {
        const { data, ms } = await post(ASK, { q: asked(i).question, asOf: asked(i).asOf, mode });
        latencies.push(ms);
        stageTimings.push(data.ask.timings);
      }
      latencies.sort((a, b) => a - b);
      return {
        p50Ms: Number(percentile(latencies, 50).toFixed(2)),
        p99Ms: Number(percentile(latencies, 99).toFixed(2)),
        meanMs: Number((latencies.reduce((a, b) => a + b, 0) / latencies.length).toFixed(2)),
        stageShare: shares(stageTimings),
      };
    };
    const single: Record<string, unknown> = {};
    for (const mode of MODES) single[mode] = await timed(pick, mode);
    const timeNamed = await questionsNamingATime();
    const namingATime: Record<string, unknown> = {};
    for (const mode of MODES) namingATime[mode] = await timed((i) => timeNamed[i % timeNamed.length]!, mode);
    const batched: Record<string, unknown> = {};
    for (const mode of [RetrievalMode.ALWAYS, RetrievalMode.RILM, RetrievalMode.ADAPTIVE]) {
      const stageTimings: StageTimings[] = [];
      const started = performance.now();
      let answered = 0;
      for (let start = 0; start < questions.length; start += BATCH_SIZE) {
        const batch = questions.slice(start, start + BATCH_SIZE).map((q) => ({ ...q, retrieval: mode }));
        const { data } = await post(BATCH, { qs: batch });
        stageTimings.push(data.batchAsk[0].timings);
        answered += batch.length;
      }
      const seconds = (performance.now() - started) / 1000;
      batched[mode] = { questions: answered, batchSize: BATCH_SIZE, questionsPerSecond: Math.round(answered / seconds), stageShare: shares(stageTimings) };
    }
    const result = {
      benchmark: `ask-${options.corpus}`,
      machine: machine(),
      embedder: runtime.services.retrieval.embedderId,
      passages: await countNodes(runtime.services.db, 'Passage'),
      embedSeconds: Number(embedSeconds.toFixed(1)),
      questions: questions.length,
      requestsPerMode: options.requests,
      readerCold,
      single,
      namingATime: { questions: timeNamed.length, ...namingATime },
      batched,
    };
    await writeResult(`ask-${options.corpus}`, result);
    return result;
  } finally {
    await server.close();
    await runtime.close();
  }
}
