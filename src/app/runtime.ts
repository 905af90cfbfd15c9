import { existsSync } from 'node:fs';
import { AnsweringRepository } from '../graph/answeringRepository.js';
import { BenchmarkRepository } from '../graph/benchmarkRepository.js';
import { CALLER_SESSION_WAIT_MS, Database } from '../graph/database.js';
import { Loaders } from '../graph/loaders.js';
import { startManagedNeo4j } from '../neo4jProcess/managedNeo4j.js';
import { migrate } from '../graph/migrator.js';
import { ReadRepository } from '../graph/readRepository.js';
import { SnapshotRepository } from '../graph/snapshotRepository.js';
import { ChangeFeed } from '../ingest/changeFeed.js';
import { chatVerifier, embedTextsWith, GrowOverLabeler } from '../ingest/growoverLabeler.js';
import { createEmbedder, type Embedder, type EmbedderConfig } from '../embedding/index.js';
import { configureNative, observeDevicePlacement } from '../native/index.js';
import { GeneratorRegistry } from '../qa/generators/index.js';
import { IngestService } from '../ingest/ingestService.js';
import { ExactMatchLabeler, type SentenceLabeler } from '../ingest/sentenceLabeler.js';
import { AskService } from '../qa/askService.js';
import { CertaintyGate, DEFAULT_GATE_PATH } from '../qa/certaintyGate.js';
import { DEFAULT_READING_GATE_PATH, READING_GATE_FEATURES } from '../qa/readingGate.js';
import type { AnsweringPorts } from '../qa/ports.js';
import { readParagraphEventTimes } from '../text/eventTimes.js';
import { AnsweringFacts } from '../graph/answeringFacts.js';
import { SpanReader } from '../qa/reader/spanReader.js';
import { DiskSpace } from '../platform/diskSpace.js';
import { FairShares } from '../platform/fairShares.js';
import { modelsDir } from '../platform/paths.js';
import type { Neo4jConnectionSettings } from '../retrieval/backgroundEmbedding.js';
import { RetrievalService } from '../retrieval/retrievalService.js';
import { admittedEmbedder } from '../retrieval/admittedEmbedder.js';
import type { ApiHost, Services } from '../api/context.js';
import type { Config } from './config.js';
import type { Logger } from '../platform/logger.js';
import { BenchmarkMaintainer } from '../benchmarks/benchmarkMaintenance.js';
import { ChatDialogueGenerator, ChatQuestionGenerator } from '../benchmarks/chatGeneration.js';
import { LocalQuestionGenerator } from '../benchmarks/localQuestions.js';
import { splitRows } from '../embedding/vectors.js';
import { analyseQuestion } from '../qa/question.js';

/** A connected ChronoQL: Neo4j reachable and migrated, services built. */
export interface Runtime extends ApiHost {
  services: Services;
  /** What it was built from. */
  config: Config;
  /** Whether this process started the managed Neo4j (and will stop it). */
  startedNeo4j: boolean;
  /** How this process reaches Neo4j (another driver, such as the embedding worker's, uses the same). */
  neo4j: Neo4jConnectionSettings;
  /**
   * Embeds in the background and syncs the native vector indexes every `intervalMs` until
   * close(), as a server does: a sync that changed the indexes is logged at info, one that
   * changed nothing at debug, a failed one at error.
   */
  keepIndexesFresh(intervalMs?: number): void;
  /** Keeps the living benchmark after every ingest; null when CHRONOQL_BENCHMARK=off. */
  benchmark: BenchmarkMaintainer | null;
  /** Another answering service over the same store and models, with some options changed (an evaluation without facts). */
  askService(changes: Partial<AnsweringPorts>): AskService;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Tail the change feed (only a server with subscribers needs it). */
  changeFeed?: boolean;
  /** Switch the store to the configured embedder (`chronoql reembed`) instead of refusing a different one. */
  replaceStoreEmbedder?: boolean;
  /** Hears each failed attempt to reach Neo4j while it is retried at start. */
  onNeo4jWait?: (error: Error) => void;
}

/** How often a server pulls new embeddings and closures into its vector indexes. */
const INDEX_REFRESH_MS = 2000;
/**
 * Units of CPU work one caller may have waiting: four times what a batch of 256 questions queues
 * at once, so it bounds only what a flood of requests can pile up.
 */
const CPU_QUEUE_PER_CALLER = 1024;

/**
 * The composition root: connects to the configured Neo4j, or starts the managed one, applies
 * migrations, and builds every service (repositories, encoders, retrievers, answering, labeling,
 * ingest, change feed) from the configuration. Everything started here is stopped by close().
 */
export async function openRuntime(config: Config, log: Logger, options: RuntimeOptions = {}): Promise<Runtime> {
  const connection = config.neo4j
    ? { ...config.neo4j, startedHere: false, stop: async () => {} }
    : await startManagedNeo4j({
        dataDir: config.dataDir,
        boltPort: config.managedNeo4j.boltPort,
        heapMb: config.managedNeo4j.heapMb,
        password: config.managedNeo4j.password,
        javaHome: config.managedNeo4j.javaHome,
        environment: config.managedNeo4j.environment,
        log: (message) => log.info(message),
      });
  const settings: Neo4jConnectionSettings = { uri: connection.uri, user: connection.user, password: connection.password, database: config.neo4j?.database };
  const db = Database.connect(settings.uri, settings.user, settings.password, settings.database, {
    readTimeoutMs: config.queryTimeoutMs,
    callerShare: { perCaller: config.callerSessions, waitMs: CALLER_SESSION_WAIT_MS },
  });
  // One caller may use every slot while it is alone; callers with work waiting take turns.
  const cpu = new FairShares(
    { total: config.cpuSlots, perCaller: config.cpuSlots, waitMs: CALLER_SESSION_WAIT_MS, queuePerCaller: CPU_QUEUE_PER_CALLER },
    'CPU slots',
  );
  let retrieval: RetrievalService;
  try {
    await waitForNeo4j(db, settings.uri, config.neo4jStartWaitMs, log, options.onNeo4jWait);
    const outcome = await migrate(db);
    if (outcome.applied.length > 0) log.info({ migrations: outcome.applied }, 'applied migrations');
    configureNative({ device: config.device, requireCuda: config.requireCuda, deviceMemoryCapBytes: config.deviceMemoryCapBytes });
    observeDevicePlacement((change) => {
      const index = { rows: change.rows, dimension: change.dimension, storage: change.storage };
      if (change.onDevice) log.info(index, 'a vector index is searched on the GPU again');
      else log.warn({ ...index, reason: change.reason }, `a vector index is searched on the CPU: ${change.reason}`);
    });
    retrieval = await RetrievalService.open({
      db,
      dataDir: config.dataDir,
      embedderConfig: config.embedder,
      connection: settings,
      log,
      replaceStoreEmbedder: options.replaceStoreEmbedder,
      admit: cpu.use,
    });
  } catch (error) {
    await db.close();
    await connection.stop();
    throw error;
  }
  const reads = new ReadRepository(db);
  const snapshots = new SnapshotRepository(db);
  const changeFeed = new ChangeFeed(reads, (error) => log.warn({ err: error }, 'change feed poll failed'));
  let askOptions: AnsweringPorts;
  let answering: AskService;
  let labeler: SentenceLabeler;
  let labelEncoder: Embedder | undefined;
  let reader: SpanReader | undefined;
  try {
    // Models load here and a bad generator or verifier setting throws: nothing started may outlive it.
    reader = await SpanReader.open({
      modelsDir: modelsDir(),
      encoderDir: config.modelsDir,
      cacheBytes: config.readerCacheBytes,
      log: (message) => log.info(message),
      admit: cpu.use,
    });
    // Until `chronoql train-gate` has written a model, answers are chosen without one and never adopted.
    const gate = existsSync(DEFAULT_GATE_PATH()) ? CertaintyGate.load() : null;
    const readingGate = existsSync(DEFAULT_READING_GATE_PATH())
      ? CertaintyGate.load(DEFAULT_READING_GATE_PATH(), READING_GATE_FEATURES, 'chronoql train-reading-gate')
      : null;
    askOptions = {
      facts: new AnsweringFacts(reads, new AnsweringRepository(db), snapshots),
      search: retrieval,
      encoder: reader,
      generators: new GeneratorRegistry(reader, config.generator),
      gate,
      readingGate,
      timesIn: readParagraphEventTimes,
    };
    answering = new AskService(askOptions);
    // CHRONOQL_LABEL_ENCODER=none keeps exact-match labeling, for a store that must not fetch a model.
    if (config.labelEncoder === null) {
      labeler = new ExactMatchLabeler();
    } else {
      const encoder = await createEmbedder({ ...config.labelEncoder, log: (message: string) => log.info(message) } as EmbedderConfig);
      // Labeling an ingest takes its turns at the CPU with the callers' work.
      labelEncoder = admittedEmbedder(encoder, config.labelEncoder.kind, cpu.use);
      labeler = new GrowOverLabeler({ embed: embedTextsWith(labelEncoder), verifier: config.verifier ? chatVerifier(config.verifier) : undefined });
    }
    if (options.changeFeed) await changeFeed.start();
  } catch (error) {
    await labelEncoder?.close?.();
    await reader?.close();
    await retrieval.close();
    await db.close();
    await connection.stop();
    throw error;
  }
  const benchmark = benchmarkMaintainer(config, db, reader, labelEncoder);
  // The snapshot is stored whatever happens here: a failed maintenance is told, and the next ingest or `benchmark build` finishes it.
  const afterSnapshot = async (): Promise<void> => {
    await benchmark
      ?.catchUp((report) => log.info(report, 'benchmark maintained'))
      .catch((error: unknown) => {
        log.error({ err: error }, 'benchmark maintenance failed; the next ingest or `chronoql benchmark build` finishes it');
      });
  };
  const disk = new DiskSpace(config.dataDir, config.minFreeDiskBytes);
  const services: Services = {
    db,
    reads,
    changeFeed,
    retrieval,
    reader,
    answering,
    benchmarkItems: new BenchmarkRepository(db),
    disk,
    ingest: new IngestService(
      db,
      () => changeFeed.poke(),
      labeler,
      afterSnapshot,
      () => disk.ensureRoom(),
    ),
  };
  return {
    services,
    config,
    benchmark,
    askService: (changes) => new AskService({ ...askOptions, ...changes }),
    keepIndexesFresh: (intervalMs = INDEX_REFRESH_MS) =>
      retrieval.keepFresh(intervalMs, (outcome) => {
        if (outcome instanceof Error) log.error({ err: outcome }, 'vector index sync failed');
        else log[outcome.added + outcome.closed > 0 ? 'info' : 'debug'](outcome, 'vector indexes synced');
      }),
    startedNeo4j: connection.startedHere,
    neo4j: settings,
    requestContext: (options = {}) => ({
      services,
      loaders: new Loaders(reads, snapshots, options.cache ?? true),
      now: new Date(),
      principal: options.principal ?? null,
      requestId: options.requestId ?? null,
      caller: options.caller ?? 'local',
      budget: options.budget ?? null,
      log: options.log ?? log,
    }),
    close: async () => {
      // An ingest started over GraphQL (at most a 1 MB request) is written to its end, not cut off by the driver closing.
      await services.ingest.idle();
      await changeFeed.stop();
      await retrieval.close();
      await reader.close();
      await labelEncoder?.close?.();
      await db.close();
      await connection.stop();
    },
  };
}

/**
 * The living benchmark's maintainer: questions from the configured drafter, dialogues when it is
 * the OpenAI-compatible generator, paragraphs clustered with the labeling encoder
 * (a Sentence-BERT model, as GrowOVER's) or else the reader's.
 */
function benchmarkMaintainer(config: Config, db: Database, reader: SpanReader, labelEncoder: Embedder | undefined): BenchmarkMaintainer | null {
  if (config.benchmark === 'off') return null;
  // A generator endpoint set for `ask` alone does not draft: only CHRONOQL_BENCHMARK=openai sends paragraphs to it.
  const chat = config.benchmark === 'openai' ? config.generator : null;
  const questions = chat ? new ChatQuestionGenerator(chat) : new LocalQuestionGenerator();
  const embed = async (texts: readonly string[]): Promise<Float32Array[]> =>
    labelEncoder ? splitRows(await labelEncoder.embed([...texts], 'query'), labelEncoder.dimension) : reader.questionVectors(texts.map(analyseQuestion));
  return new BenchmarkMaintainer({ db, questions, dialogues: chat ? new ChatDialogueGenerator(chat) : null, embed, reader });
}

/** Retries a Neo4j that does not answer yet (a database container still starting) with backoff, up to `waitMs`. */
async function waitForNeo4j(db: Database, uri: string, waitMs: number, log: Logger, onWait?: (error: Error) => void): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let delayMs = 500; ; delayMs = Math.min(delayMs * 2, 8_000)) {
    try {
      return await db.verify();
    } catch (error) {
      if (/^Neo\.ClientError\.Security\./.test((error as { code?: string }).code ?? '')) throw error; // wrong credentials: waiting will not help
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`Neo4j at ${uri} did not answer within ${waitMs} ms: ${(error as Error).message}`);
      const wait = Math.min(delayMs, left);
      onWait?.(error as Error);
      log.warn({ uri, retryInMs: wait }, `Neo4j is not reachable yet (${(error as Error).message}); retrying`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
