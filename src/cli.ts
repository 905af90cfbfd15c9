#!/usr/bin/env node
import 'reflect-metadata';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import { Command, Option } from 'commander';
import { parseDateInput } from './domain/time.js';
import { migrate } from './graph/migrator.js';
import { demoSnapshots } from './ingest/demoCorpus.js';
import type { GateRow } from '../eval/gateTraining.js';
import { IngestBusyError, IngestLeaseLostError, InvalidSnapshotError, SnapshotOrderError } from './ingest/errors.js';
import { neo4jProblem } from './api/errorReporting.js';
import type { IngestReport } from './ingest/ingestService.js';
import { readSnapshotFile } from './ingest/snapshotReader.js';
import { projectRoot } from './platform/paths.js';
import { EmbedderConfigError } from './embedding/index.js';
import { EmbedderMismatchError } from './retrieval/embeddingJob.js';
import { MavenError } from './platform/maven.js';
import { printChronoqlSchema } from './api/schema.js';
import { startBootServer, startServer } from './api/server.js';
import { createApiKey, hashApiKey, parseRole, Role } from './api/auth.js';
import { ApiKeyRepository } from './graph/apiKeyRepository.js';
import { loadConfig } from './app/config.js';
import { createLogger, type Logger } from './platform/logger.js';
import { openRuntime, type Runtime } from './app/runtime.js';

/** How often a server pulls new embeddings and closures into its vector indexes. */
const SERVER_REFRESH_MS = 2000;

function summary(report: IngestReport): string {
  if (report.alreadyIngested) return `snapshot ${report.snapshot.id} was already ingested; nothing changed`;
  const { sentences: s, facts: f } = report;
  const seconds = report.durationMs / 1000;
  return [
    `snapshot ${report.snapshot.id}: ${report.articles} articles (${report.articlesAdded} added, ${report.articlesChanged} changed, ${report.articlesRemoved} removed, ${report.articlesResumed} already written by an earlier run)`,
    `  sentences: ${s.total} (${s.unchanged} unchanged, ${s.changed} changed, ${s.new} new, ${s.deleted} deleted, ${s.initial} in new articles)`,
    `  facts: ${f.updated} updated, ${f.refined} refined (false changes), ${f.new} new, ${f.removed} removed, ${f.initial} in new articles`,
    `  ${report.changeEvents} change events in ${seconds.toFixed(1)} s (${Math.round(s.total / Math.max(seconds, 1e-3))} sentences/s)`,
  ].join('\n');
}

async function withRuntime<T>(log: Logger, work: (runtime: Runtime) => Promise<T>): Promise<T> {
  const runtime = await openRuntime(loadConfig(), log);
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}

async function withProgress<T>(unit: string, work: (update: (done: number, total: number) => void) => Promise<T>): Promise<T> {
  const bar = new SingleBar({ stream: process.stderr, format: ` {bar} {value}/{total} ${unit} | {eta_formatted} left` }, Presets.shades_classic);
  bar.start(0, 0);
  try {
    return await work((done, total) => {
      bar.setTotal(total);
      bar.update(done);
    });
  } finally {
    bar.stop();
  }
}

const DEMO_KEY_FILE = 'demo-api-key';

/**
 * The demo's writer key: the one saved in the data directory while it is still valid, else a
 * new one (the store keeps only its hash, so the token itself is kept in a private file).
 */
async function demoApiKey(runtime: Runtime, dataDir: string): Promise<string> {
  const file = join(dataDir, DEMO_KEY_FILE);
  const saved = await readFile(file, 'utf8').then((text) => text.trim(), () => '');
  if (saved && (await new ApiKeyRepository(runtime.services.db).findActiveByHash(hashApiKey(saved)))) return saved;
  const { token } = await createApiKey(runtime.services.db, 'demo', Role.WRITER);
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** Long enough for the lease of an ingest killed mid-way to run out, so a re-run resumes it. */
const CLI_LEASE_WAIT_MS = 120_000;

async function ingestFile(runtime: Runtime, file: string, options: { takenAt: Date; source: string; complete: boolean }): Promise<IngestReport> {
  const articles = await readSnapshotFile(file);
  return withProgress('articles', (update) => runtime.services.ingest.ingest(articles, { ...options, leaseWaitMs: CLI_LEASE_WAIT_MS, onProgress: update }));
}

/**
 * Waits until every new passage and sentence version has its vector (embedded by this
 * process's worker, or by a running server that holds the embedding lease), so that what was
 * ingested is searchable when the command returns. Interrupted, it resumes on the next run.
 */
async function embedNewUnits(runtime: Runtime): Promise<void> {
  const started = performance.now();
  const { embedded } = await withProgress('passages and sentences embedded', (update) => runtime.services.retrieval.catchUp(update));
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(
    `searchable after ${seconds.toFixed(1)} s (${embedded} passages and sentences embedded by this process with ${runtime.services.retrieval.embedderId}; any others by a running server)\n`,
  );
}

/** Serves until SIGINT/SIGTERM, then shuts down in order: HTTP, feed, driver, managed Neo4j. */
async function serveUntilStopped(runtime: Runtime, log: Logger): Promise<void> {
  const config = loadConfig();
  const server = await startServer(runtime, { ...config, log });
  runtime.services.retrieval.keepFresh(SERVER_REFRESH_MS, (outcome) => {
    if (outcome instanceof Error) log.error({ err: outcome }, 'vector index sync failed');
    else if (outcome.added + outcome.closed > 0) log.info(outcome, 'vector indexes synced');
  });
  process.stdout.write(`ChronoQL is serving at ${server.url} (explorer: open it in a browser; health: /health)\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      log.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  await runtime.close();
}

/** A benchmark's result: one JSON line with --json, indented otherwise. */
function printResult(result: unknown, json: boolean | undefined): void {
  process.stdout.write((json ? JSON.stringify(result) : JSON.stringify(result, null, 2)) + '\n');
}

function fail(error: unknown): never {
  const explained = [InvalidSnapshotError, SnapshotOrderError, IngestBusyError, IngestLeaseLostError, RangeError, EmbedderMismatchError, EmbedderConfigError, MavenError];
  const database = neo4jProblem(error);
  if (database) {
    process.stderr.write(`chronoql: ${database.message} (${(error as Error).message}); an interrupted ingest resumes when run again\n`);
  } else if (explained.some((kind) => error instanceof kind)) {
    process.stderr.write(`chronoql: ${(error as Error).message}\n`);
  } else {
    process.stderr.write(`chronoql: ${(error as Error)?.stack ?? String(error)}\n`);
  }
  process.exit(1);
}

const program = new Command('chronoql')
  .description('ChronoQL: a GraphQL API for knowledge that changes over time, on a temporal Neo4j graph.')
  .showHelpAfterError();

program
  .command('serve')
  .description('Start Neo4j if needed, migrate, and serve GraphQL (HTTP + subscriptions) with the explorer.')
  .action(async () => {
    const config = loadConfig();
    const log = createLogger(config.logLevel);
    // The port answers (503, "starting") while Neo4j is retried, then the real server takes it.
    const boot = await startBootServer(config);
    let runtime: Runtime;
    try {
      runtime = await openRuntime(config, log, { changeFeed: true, onNeo4jWait: (error) => boot.setProblem(error.message) });
    } finally {
      await boot.close();
    }
    await serveUntilStopped(runtime, log);
  });

program
  .command('ingest')
  .description('Ingest a dated snapshot from a JSON Lines file (one article per line).')
  .argument('<file>', 'JSON Lines snapshot file')
  .requiredOption('--taken-at <date>', 'the date the snapshot describes (YYYY-MM-DD or ISO date-time)')
  .option('--source <name>', 'where the snapshot comes from', 'cli')
  .option('--complete', 'the file lists every article: remove articles it does not contain', false)
  .action(async (file: string, options: { takenAt: string; source: string; complete: boolean }) => {
    const takenAt = parseDateInput(options.takenAt, '--taken-at');
    const log = createLogger(loadConfig().logLevel);
    await withRuntime(log, async (runtime) => {
      const report = await ingestFile(runtime, file, { takenAt, source: options.source, complete: options.complete });
      process.stdout.write(summary(report) + '\n');
      await embedNewUnits(runtime);
    });
  });

program
  .command('demo')
  .description('Ingest the demo corpus (data/demo) in date order, then serve.')
  .option('--no-serve', 'only ingest')
  .action(async (options: { serve: boolean }) => {
    const log = createLogger(loadConfig().logLevel);
    const runtime = await openRuntime(loadConfig(), log, { changeFeed: options.serve });
    try {
      for (const snapshot of await demoSnapshots()) {
        const report = await ingestFile(runtime, snapshot.file, { takenAt: snapshot.takenAt, source: snapshot.source, complete: false });
        process.stdout.write(summary(report) + '\n');
      }
      await embedNewUnits(runtime);
      if (options.serve) {
        const token = await demoApiKey(runtime, loadConfig().dataDir);
        process.stdout.write(
          `Demo API key (writer; for mutations and subscriptions), saved in ${DEMO_KEY_FILE} of the data directory:\n  ${token}\n` +
            `In the explorer, add the header {"Authorization": "Bearer ${token}"}.\n`,
        );
      }
    } catch (error) {
      await runtime.close();
      throw error;
    }
    if (options.serve) await serveUntilStopped(runtime, log);
    else await runtime.close();
  });

program
  .command('reembed')
  .description('Switch the store to the configured embedder (CHRONOQL_EMBEDDER) and re-embed every passage and sentence with it.')
  .action(async () => {
    const log = createLogger(loadConfig().logLevel);
    const runtime = await openRuntime(loadConfig(), log, { replaceStoreEmbedder: true });
    try {
      await embedNewUnits(runtime);
    } finally {
      await runtime.close();
    }
  });

program
  .command('migrate')
  .description('Apply pending schema migrations (serve does this on start).')
  .action(async () => {
    const log = createLogger(loadConfig().logLevel);
    const outcome = await withRuntime(log, (runtime) => migrate(runtime.services.db));
    process.stdout.write(`migrations: ${outcome.applied.length + outcome.alreadyApplied.length} applied in total\n`);
  });

const keys = program.command('keys').description('Manage API keys (stored hashed in Neo4j; send one as Authorization: Bearer KEY).');
keys
  .command('create')
  .description('Create a key and print it once (it cannot be shown again).')
  .requiredOption('--name <name>', 'who or what the key is for')
  .option('--role <role>', 'reader, writer or admin', 'reader')
  .action(async (options: { name: string; role: string }) => {
    const role = parseRole(options.role);
    if (!role) throw new RangeError(`--role must be reader, writer or admin, got "${options.role}"`);
    const log = createLogger(loadConfig().logLevel);
    const { key, token } = await withRuntime(log, (runtime) => createApiKey(runtime.services.db, options.name.trim(), role));
    process.stderr.write(`created key ${key.id} (${key.role}) for "${key.name}"; store it now, it is not shown again:\n`);
    process.stdout.write(`${token}\n`);
  });
keys
  .command('revoke')
  .description('Revoke a key by its id (running servers stop accepting it within 5 seconds).')
  .argument('<id>', 'the key id, as `keys list` shows it')
  .action(async (id: string) => {
    const log = createLogger(loadConfig().logLevel);
    const key = await withRuntime(log, (runtime) => new ApiKeyRepository(runtime.services.db).revoke(id));
    if (!key) throw new RangeError(`no API key has the id "${id}"`);
    process.stdout.write(`revoked key ${key.id} (${key.role}, "${key.name}") at ${key.revokedAt!.toISOString()}\n`);
  });
keys
  .command('list')
  .description('List keys (ids, names, roles, dates; never the secrets).')
  .action(async () => {
    const log = createLogger(loadConfig().logLevel);
    const all = await withRuntime(log, (runtime) => new ApiKeyRepository(runtime.services.db).list());
    for (const key of all) {
      const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active';
      process.stdout.write(`${key.id}\t${key.role}\t${state}\tcreated ${key.createdAt.toISOString()}\t${key.name}\n`);
    }
    if (all.length === 0) process.stdout.write('no API keys; create one with `chronoql keys create --name NAME --role ROLE`\n');
  });

program
  .command('schema')
  .description('Print the GraphQL schema (SDL) generated from the code.')
  .option('--write', 'write it to schema/schema.graphql instead')
  .action(async (options: { write?: boolean }) => {
    const sdl = await printChronoqlSchema();
    if (options.write) await writeFile(join(projectRoot(), 'schema', 'schema.graphql'), sdl);
    else process.stdout.write(sdl);
  });

const bench = program.command('bench').description('Run a benchmark (results go to bench/results/).');
bench
  .command('ingest')
  .description('Ingest throughput and storage growth on a synthetic corpus (uses its own data directory).')
  .addOption(new Option('--articles <n>', 'articles').default(10000).argParser(Number))
  .addOption(new Option('--change-rate <r>', 'share of sentences changed in the second snapshot').default(0.02).argParser(Number))
  .option('--json', 'print JSON')
  .action(async (options: { articles: number; changeRate: number; json?: boolean }) => {
    const { runIngestBenchmark } = await import('../bench/ingest.js');
    const result = await runIngestBenchmark(options);
    printResult(result, options.json);
  });
bench
  .command('fact-history')
  .description('p50/p99 latency of the factHistory query over HTTP on the demo corpus.')
  .addOption(new Option('--requests <n>', 'requests to time').default(2000).argParser(Number))
  .option('--json', 'print JSON')
  .action(async (options: { requests: number; json?: boolean }) => {
    const { runFactHistoryBenchmark } = await import('../bench/factHistory.js');
    const result = await runFactHistoryBenchmark(options);
    printResult(result, options.json);
  });

bench
  .command('search')
  .description('Native batched time-filtered search vs the TypeScript reference and the GEMM roofline (synthetic vectors).')
  .addOption(new Option('--n <rows>', 'rows in the index').default(100_000).argParser(Number))
  .addOption(new Option('--d <dim>', 'dimension').default(384).argParser(Number))
  .addOption(new Option('--q <sizes>', 'query batch size(s), comma-separated').default('64'))
  .addOption(new Option('--k <k>', 'results per query').default(10).argParser(Number))
  .addOption(new Option('--device <device>', 'cpu or cuda').choices(['cpu', 'cuda']).default('cpu'))
  .addOption(new Option('--repeats <n>', 'timed repeats (best is kept)').default(3).argParser(Number))
  .option('--json', 'print one JSON object')
  .option('--write', 'run the committed matrix and write bench/results/search-<device>.{md,json}')
  .action(async (options: { n: number; d: number; q: string; k: number; device: 'cpu' | 'cuda'; repeats: number; json?: boolean; write?: boolean }) => {
    const { searchBenchmarkCommand } = await import('../bench/search.js');
    await searchBenchmarkCommand({ ...options, q: options.q.split(',').map(Number), json: Boolean(options.json), write: Boolean(options.write) });
  });
bench
  .command('retrieval')
  .description('search latency (p50/p99 over HTTP) and embedding throughput on a synthetic corpus of --passages passages.')
  .addOption(new Option('--passages <n>', 'passages in the corpus').default(100_000).argParser(Number))
  .addOption(new Option('--requests <n>', 'timed requests per mode').default(300).argParser(Number))
  .option('--json', 'print JSON')
  .action(async (options: { passages: number; requests: number; json?: boolean }) => {
    const { runRetrievalLatencyBenchmark } = await import('../bench/retrievalLatency.js');
    const result = await runRetrievalLatencyBenchmark(options);
    printResult(result, options.json);
  });
bench
  .command('load')
  .description('Mixed traffic (70% reads, 20% ask, 10% history) at the highest concurrency with p99 under 200 ms, a soak with the server\'s memory, and a burst of change events to many subscribers; the server runs as its own process.')
  .option('--seconds <n>', 'length of the main run', '60')
  .option('--soak-seconds <n>', 'length of the soak', '120')
  .option('--connections <n>', 'skip the sweep and use this concurrency')
  .option('--subscribers <n>', 'live subscribers during the burst', '100')
  .option('--events <n>', 'change events in the burst', '10000')
  .action(async (options: { seconds: string; soakSeconds: string; connections?: string; subscribers: string; events: string }) => {
    const { runLoadBenchmark } = await import('../bench/load.js');
    printResult(
      await runLoadBenchmark({
        seconds: Number(options.seconds),
        soakSeconds: Number(options.soakSeconds),
        connections: options.connections === undefined ? undefined : Number(options.connections),
        subscribers: Number(options.subscribers),
        events: Number(options.events),
      }),
      false,
    );
  });

bench
  .command('ask')
  .description('`ask` p50/p99 per retrieval mode (single requests over HTTP) and `batchAsk` questions/s, with the time share per stage.')
  .addOption(new Option('--corpus <corpus>', 'the demo corpus, or the demo plus a synthetic corpus of recombined demo sentences').choices(['demo', 'synthetic']).default('demo'))
  .option('--passages <n>', 'synthetic passages', (v) => Number.parseInt(v, 10), 100_000)
  .option('--requests <n>', 'timed requests per mode', (v) => Number.parseInt(v, 10), 500)
  .option('--json', 'print JSON')
  .action(async (options: { corpus: 'demo' | 'synthetic'; passages: number; requests: number; json?: boolean }) => {
    const { runAskBenchmark } = await import('../bench/ask.js');
    printResult(await runAskBenchmark(options), options.json);
  });
bench
  .command('labeling')
  .description('Sentence labeling throughput (exact match vs GrowOVER) on the synthetic corpus and the demo corpus, with the encoder and classifier shares.')
  .option('--articles <n>', 'synthetic articles (20 sentences each)', (v) => Number.parseInt(v, 10), 2000)
  .option('--change-rate <r>', 'share of sentences changed', Number.parseFloat, 0.1)
  .option('--json', 'print JSON')
  .action(async (options: { articles: number; changeRate: number; json?: boolean }) => {
    const { runLabelingBenchmark } = await import('../bench/labeling.js');
    printResult(await runLabelingBenchmark(options), options.json);
  });
bench
  .command('fusion')
  .description('Choose the hybrid fusion on one half of a QA set (split by article, contexts as corpus) and report it on the other half.')
  .requiredOption('--qa <file>', 'QA file with contexts (e.g. a SQuAD subset)')
  .option('--json', 'print JSON')
  .action(async (options: { qa: string; json?: boolean }) => {
    const { runFusionTuning } = await import('../bench/fusionTuning.js');
    printResult(await runFusionTuning(options), options.json);
  });
bench
  .command('retrieval-eval')
  .description('Recall@1/5/20 and MRR@20 per search mode on the demo corpus (fact questions and data/eval/paraphrase-qa.jsonl).')
  .option('--json', 'print JSON')
  .action(async (options: { json?: boolean }) => {
    const { runRetrievalEvaluation } = await import('../bench/retrievalEval.js');
    const result = await runRetrievalEvaluation();
    printResult(result, options.json);
  });

program
  .command('eval-retrieval')
  .description('Recall@1/5/20 and MRR@20 of every search mode on a QA file (JSON Lines: question, answers, context, asOf).')
  .requiredOption('--qa <file>', 'QA file')
  .addOption(new Option('--unit <unit>', 'what is retrieved').choices(['PASSAGE', 'SENTENCE']).default('PASSAGE'))
  .option('--contexts-as-corpus', "use the items' own contexts (one article per distinct text) as the corpus, in a separate data directory (.chronoql-eval)")
  .addOption(new Option('--split <part>', 'score one half of the questions, split by article (alternating titles)').choices(['tune', 'held-out', 'all']).default('all'))
  .option('--write-corpus <file>', 'with --contexts-as-corpus: write the contexts as a snapshot file for `chronoql ingest` and stop')
  .option('--endpoint <url>', 'evaluate a running server (e.g. http://127.0.0.1:4000/graphql) instead of opening a store')
  .action(async (options: { qa: string; unit: 'PASSAGE' | 'SENTENCE'; contextsAsCorpus?: boolean; split: 'tune' | 'held-out' | 'all'; writeCorpus?: string; endpoint?: string }) => {
    const { evaluateQaFile } = await import('../eval/evaluationStore.js');
    const table = await evaluateQaFile(options.qa, {
      unit: options.unit,
      contextsAsCorpus: Boolean(options.contextsAsCorpus),
      split: options.split,
      writeCorpus: options.writeCorpus,
      endpoint: options.endpoint,
      log: createLogger(loadConfig().logLevel),
    });
    process.stdout.write(table + '\n');
  });

const writeJson = (file: string, value: unknown): Promise<void> => writeFile(file, JSON.stringify(value, null, 2) + '\n');

program
  .command('train-reader')
  .description(
    "Train the extractive reader: write the reader encoder's word states and the word features of a training pool and of both halves of a dev set, then train the head with eval/reader/train_reader.py (PyTorch) and write models/reader.onnx and models/reader.json.",
  )
  .option('--train <file>', 'QA file to train on (gold paragraphs)', join(projectRoot(), 'data', 'squad', 'squad-train-pool.jsonl.gz'))
  .option('--dev <file>', 'QA file whose tune half chooses the epoch and whose held-out half is reported', join(projectRoot(), 'data', 'squad', 'squad-dev-subset.jsonl.gz'))
  .option('--work <dir>', 'where the prepared data goes (about 1 GB)', join(loadConfig().dataDir, 'reader-training'))
  .option('--out <dir>', 'where the model goes', join(projectRoot(), 'models'))
  .option('--python <command>', 'a python3 with PyTorch and NumPy', 'python3')
  .option('--skip-prepare', 'reuse the data already in --work')
  .option('--ablation', 'also train the variants that leave one part out')
  .action(async (options: { train: string; dev: string; work: string; out: string; python: string; skipPrepare?: boolean; ablation?: boolean }) => {
    const { readQaFile, splitByArticle } = await import('../eval/qaFile.js');
    const { prepareReaderData } = await import('../eval/reader/prepare.js');
    const { READER_ENCODER } = await import('./qa/reader/spanReader.js');
    if (!options.skipPrepare) {
      const dev = await readQaFile(options.dev);
      const splits = { train: await readQaFile(options.train), tune: splitByArticle(dev, 'tune'), 'held-out': splitByArticle(dev, 'held-out') };
      for (const [name, items] of Object.entries(splits)) {
        const prepared = await withProgress(`${name} questions`, (update) =>
          prepareReaderData(items, { dir: options.work, name, encoder: READER_ENCODER, modelsDir: loadConfig().modelsDir, onProgress: update }),
        );
        process.stdout.write(`${name}: ${prepared.questions} questions over ${prepared.passages} paragraphs, ${prepared.withGold} with the answer found as words\n`);
      }
    }
    const { spawn } = await import('node:child_process');
    const script = join(projectRoot(), 'eval', 'reader', 'train_reader.py');
    const args = [script, '--data', options.work, '--out', options.out, '--report', 'held-out', ...(options.ablation ? ['--ablation'] : [])];
    const code = await new Promise<number | null>((resolve, reject) => spawn(options.python, args, { stdio: 'inherit' }).on('error', reject).on('exit', resolve));
    if (code !== 0) throw new RangeError(`${options.python} ${args.join(' ')} exited with ${code}`);
  });

program
  .command('make-time-set')
  .description(
    'Build a time-scoped QA set from a QA file with real paragraphs: one answer per paragraph replaced between two dated snapshots, asked before and after the change and with time expressions (answer it with `eval-answers --snapshots DIR/snapshots.json`).',
  )
  .requiredOption('--qa <file>', 'QA file with gold paragraphs (e.g. data/squad/squad-dev-subset.jsonl.gz)')
  .addOption(new Option('--split <part>', 'use one half of it (split by article)').choices(['tune', 'held-out', 'all']).default('held-out'))
  .option('--paragraphs <n>', 'paragraphs whose answer changes', (v) => Number.parseInt(v, 10), 150)
  .requiredOption('--out <dir>', 'directory for the snapshots, their manifest and questions.jsonl')
  .action(async (options: { qa: string; split: 'tune' | 'held-out' | 'all'; paragraphs: number; out: string }) => {
    const { readQaFile, splitByArticle } = await import('../eval/qaFile.js');
    const { makeTimeSet } = await import('../eval/timeScoped/makeTimeSet.js');
    const made = await makeTimeSet(splitByArticle(await readQaFile(options.qa), options.split), { dir: options.out, paragraphs: options.paragraphs, seed: 20261124 });
    process.stdout.write(`${made.paragraphs} paragraphs, ${made.changed} with a changed answer, ${made.questions} questions → ${options.out}\n`);
  });

program
  .command('questions')
  .description('Generate typed QA items (NEW / CHANGED / UNCHANGED) from the facts of every snapshot after the first, as JSON Lines.')
  .option('--as-of <date>', 'only the latest snapshot taken at or before this date')
  .requiredOption('--out <file>', 'JSON Lines file to write')
  .action(async (options: { asOf?: string; out: string }) => {
    const asOf = options.asOf ? parseDateInput(options.asOf, '--as-of') : undefined;
    const { generateQuestions } = await import('./benchmarks/questionGeneration.js');
    const { AnsweringRepository } = await import('./graph/answeringRepository.js');
    const { SnapshotRepository } = await import('./graph/snapshotRepository.js');
    await withRuntime(createLogger(loadConfig().logLevel), async (runtime) => {
      const db = runtime.services.db;
      const items = await generateQuestions(new AnsweringRepository(db), await new SnapshotRepository(db).list(), asOf);
      await writeFile(options.out, items.map((item) => JSON.stringify(item)).join('\n') + (items.length > 0 ? '\n' : ''));
      const count = (type: string): number => items.filter((item) => item.type === type).length;
      process.stdout.write(`${items.length} questions (${count('CHANGED')} CHANGED, ${count('NEW')} NEW, ${count('UNCHANGED')} UNCHANGED) → ${options.out}\n`);
    });
  });

/** Where evaluation and training questions are asked: their own contexts, another file's, dated snapshots, or the configured store. */
const storeOptions = (command: Command): Command =>
  command
    .addOption(new Option('--split <part>', 'use one half of the questions (split by article)').choices(['tune', 'held-out', 'all']).default('held-out'))
    .option('--contexts-as-corpus', "answer over the items' own contexts, in a store of their own under .chronoql-eval")
    .option('--corpus-of <file>', "answer over the contexts of another QA file (its questions' paragraphs are then not in the store)")
    .option('--snapshots <manifest>', 'answer over the dated snapshot files a snapshots.json lists (as data/demo/snapshots.json)');

interface StoreOptions {
  qa: string;
  split: 'tune' | 'held-out' | 'all';
  contextsAsCorpus?: boolean;
  corpusOf?: string;
  snapshots?: string;
}

/** The chosen questions and the store to ask them in (null: the configured one). */
async function questionsAndStore(options: StoreOptions) {
  const { contextsAsCorpus, readQaFile, splitByArticle } = await import('../eval/qaFile.js');
  const { corpusSnapshots } = await import('../eval/evaluationStore.js');
  const all = await readQaFile(options.qa);
  const own = options.contextsAsCorpus ? contextsAsCorpus(all) : null;
  const items = splitByArticle(own?.items ?? all, options.split);
  if (own) return { items, store: corpusSnapshots(options.qa, own.articles) };
  if (options.corpusOf) return { items, store: corpusSnapshots(options.corpusOf, contextsAsCorpus(await readQaFile(options.corpusOf)).articles) };
  if (options.snapshots) {
    const manifest = await demoSnapshots(dirname(options.snapshots), basename(options.snapshots));
    return { items, store: await Promise.all(manifest.map(async (entry) => ({ takenAt: entry.takenAt, source: entry.source, articles: await readSnapshotFile(entry.file) }))) };
  }
  return { items, store: null };
}

storeOptions(
  program
    .command('gate-rows')
    .description("Collect the certainty gate's training rows: every first-round candidate of each question with its features and what it was (right, a stale value, wrong), as JSON Lines.")
    .requiredOption('--qa <file>', 'QA file (unanswerable questions have "answers": [])')
    .requiredOption('--out <file>', 'JSON Lines file to write'),
).action(async (options: StoreOptions & { out: string }) => {
  const { withEvaluationStore } = await import('../eval/evaluationStore.js');
  const { collectGateRows } = await import('../eval/gateTraining.js');
  const { items, store } = await questionsAndStore(options);
  const source = `${basename(options.qa)}:${options.split}${options.corpusOf ? `@${basename(options.corpusOf)}` : ''}`;
  const rows = await withEvaluationStore(store, createLogger(loadConfig().logLevel), (runtime) =>
    withProgress('questions', (update) => collectGateRows(runtime.services.answering, items, source, update)),
  );
  await writeFile(options.out, rows.map((row) => JSON.stringify(row)).join('\n') + (rows.length > 0 ? '\n' : ''));
  process.stdout.write(`${rows.length} candidates of ${items.length} questions → ${options.out}\n`);
});

program
  .command('train-gate')
  .description('Train the certainty gate on rows from `chronoql gate-rows`, calibrate it and choose its adoption threshold.')
  .requiredOption('--rows <files>', 'comma-separated JSON Lines files of gate rows')
  .option('--fit-only <files>', 'comma-separated row files only to fit on, never to calibrate on (items generated from the facts)')
  .option('--precision <p>', 'share of adopted answers that must be right on the calibration questions, for facts and for text apart', Number.parseFloat, 0.96)
  .option('--out <file>', 'where the model goes', join(projectRoot(), 'models', 'certainty-gate.json'))
  .action(async (options: { rows: string; fitOnly?: string; precision: number; out: string }) => {
    const { readJsonLines } = await import('./ingest/jsonLines.js');
    const { trainGateModel } = await import('../eval/gateTraining.js');
    const read = async (list: string | undefined): Promise<GateRow[]> =>
      (await Promise.all((list ?? '').split(',').filter((file) => file.trim() !== '').map(async (file) => (await readJsonLines(file.trim())).parsed.map((line) => line.value as GateRow)))).flat();
    const [rows, fitOnly] = await Promise.all([read(options.rows), read(options.fitOnly)]);
    const { model, report } = await trainGateModel(rows, { precision: options.precision, fitOnly });
    const sources = [...new Set([...rows, ...fitOnly].map((row) => row.source))];
    const command = `chronoql train-gate --rows ${options.rows}${options.fitOnly ? ` --fit-only ${options.fitOnly}` : ''} --precision ${options.precision}`;
    await writeJson(options.out, { ...model, provenance: { command, sources, ...report } });
    printResult({ out: options.out, sources, ...report }, false);
  });

storeOptions(
  program
    .command('eval-answers')
    .description("EM / F1 / match of `ask` on a QA file: the extractive reader on each item's gold paragraph, and through batchAsk with retrieval per mode, with how far adopted answers can be trusted.")
    .requiredOption('--qa <file>', 'QA file')
    .option('--modes <list>', 'retrieval modes for batchAsk, comma-separated', 'NEVER,ALWAYS,GATED,RILM,ADAPTIVE')
    .option('--without-facts', "leave the graph's facts out of the candidates (measures the passage path alone)")
    .option('--out <file>', 'JSON result file'),
).action(async (options: StoreOptions & { modes: string; withoutFacts?: boolean; out?: string }) => {
  const { answerTable, evaluateAsk, evaluateGoldParagraph } = await import('../eval/answerEvaluation.js');
  const { withEvaluationStore } = await import('../eval/evaluationStore.js');
  const { RetrievalMode } = await import('./qa/types.js');
  const modes = options.modes.split(',').map((mode) => {
    const known = RetrievalMode[mode.trim() as keyof typeof RetrievalMode];
    if (!known) throw new RangeError(`--modes: unknown mode "${mode}" (known: ${Object.keys(RetrievalMode).join(', ')})`);
    return known;
  });
  const { items, store } = await questionsAndStore(options);
  let goldParagraph = null;
  const withRetrieval = await withEvaluationStore(store, createLogger(loadConfig().logLevel), async (runtime) => {
    const { AskService } = await import('./qa/askService.js');
    const { AnsweringRepository } = await import('./graph/answeringRepository.js');
    const { SnapshotRepository } = await import('./graph/snapshotRepository.js');
    const { db, reads, retrieval, reader } = runtime.services;
    if (!options.corpusOf && items.every((item) => item.documents.length > 0)) goldParagraph = await evaluateGoldParagraph(reader, items);
    const ask = options.withoutFacts
      ? new AskService({ reads, answering: new AnsweringRepository(db), snapshots: new SnapshotRepository(db), retrieval, reader, factCandidates: false })
      : runtime.services.answering;
    return withProgress('batches', (update) => evaluateAsk(ask, items, modes, update));
  });
  const result = { qa: options.qa, split: options.split, corpusOf: options.corpusOf ?? null, snapshots: options.snapshots ?? null, withoutFacts: Boolean(options.withoutFacts), items: items.length, goldParagraph, withRetrieval };
  if (options.out) await writeJson(options.out, result);
  const gold = goldParagraph as { exactMatch: number; f1: number } | null;
  process.stdout.write(
    `${items.length} questions (${options.qa}, ${options.split})${gold ? `; reader on the gold paragraph: EM ${gold.exactMatch}, F1 ${gold.f1}` : ''}\n${answerTable(withRetrieval)}\n` +
      (withRetrieval.decision ? `retrieval decision accuracy ${withRetrieval.decision.accuracy.toFixed(3)}\n` : '') +
      (options.out ? `details (types, reliability diagram) in ${options.out}\n` : ''),
  );
});

/** The sentence labeler's encoder, outside any store (training and evaluation need no database). */
async function labelEncoder() {
  const { createEmbedder } = await import('./embedding/index.js');
  const { labelEncoderConfig } = await import('./ingest/growoverLabeler.js');
  return createEmbedder(labelEncoderConfig(process.env));
}

program
  .command('train-relations')
  .description('Train the sentence relation classifier (entailment / contradiction / neutral) on controlled edits of the demo corpus sentences.')
  .option('--out <file>', 'where the model goes', join(projectRoot(), 'models', 'sentence-relations.json'))
  .action(async (options: { out: string }) => {
    const { splitSentences } = await import('./ingest/sentenceSplitter.js');
    const { relationTrainingPairs, trainRelationClassifier } = await import('../eval/relationTraining.js');
    const { embedTextsWith } = await import('./ingest/growoverLabeler.js');
    const articles = new Map<string, string[]>();
    for (const snapshot of await demoSnapshots()) {
      for (const article of await readSnapshotFile(snapshot.file)) {
        const sentences = new Set([...(articles.get(article.id) ?? []), ...splitSentences(article.text).map((s) => s.text)]);
        articles.set(article.id, [...sentences]);
      }
    }
    const pairs = relationTrainingPairs([...articles.values()]);
    const embedder = await labelEncoder();
    try {
      const trained = await trainRelationClassifier(pairs, embedTextsWith(embedder));
      await writeJson(options.out, { ...trained.model, provenance: { command: 'chronoql train-relations', embedder: embedder.id, pairs: trained.counts } });
      process.stdout.write(`relation classifier: ${pairs.length} pairs ${JSON.stringify(trained.counts)}, loss ${trained.loss.toFixed(4)} → ${options.out}\n`);
    } finally {
      await embedder.close?.();
    }
  });

program
  .command('eval-labeling')
  .description('Precision, recall, F1 and confusion of the exact-match and GrowOVER sentence labelers on labeled sentence pairs, and the false-change filter on labeled fact pairs.')
  .option('--sentences <file>', 'labeled sentence pairs', join(projectRoot(), 'test', 'fixtures', 'sentence-pairs.jsonl'))
  .option('--facts <file>', 'labeled fact pairs', join(projectRoot(), 'test', 'fixtures', 'fact-pairs.jsonl'))
  .addOption(new Option('--split <part>', 'which cases (demo cases alternate; hand-edited cases are held out)').choices(['tune', 'held-out', 'all']).default('held-out'))
  .option('--json', 'print JSON')
  .action(async (options: { sentences: string; facts: string; split: 'tune' | 'held-out' | 'all'; json?: boolean }) => {
    const evaluation = await import('../eval/labelingEvaluation.js');
    const { ExactMatchLabeler } = await import('./ingest/sentenceLabeler.js');
    const { GrowOverLabeler, embedTextsWith } = await import('./ingest/growoverLabeler.js');
    const cases = evaluation.splitCases(await evaluation.readSentenceCases(options.sentences), options.split);
    const embedder = await labelEncoder();
    try {
      const sentences = [await evaluation.evaluateLabeler(new ExactMatchLabeler(), cases), await evaluation.evaluateLabeler(new GrowOverLabeler({ embed: embedTextsWith(embedder) }), cases)];
      const facts = evaluation.evaluateFactPairs(await evaluation.readFactPairs(options.facts));
      printResult({ split: options.split, embedder: embedder.id, sentences, facts }, options.json);
    } finally {
      await embedder.close?.();
    }
  });

program.parseAsync(process.argv).catch(fail);
