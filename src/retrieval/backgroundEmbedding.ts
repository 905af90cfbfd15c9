/**
 * Embedding off the main thread: a worker thread with its own embedder and its own Neo4j
 * driver runs EmbeddingJob passes, so queries (which embed only their own short text) never
 * wait behind a snapshot's passages. This module is both sides: the handle the main thread
 * holds, and the worker's entry (the same file, started with `workerData`).
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Database } from '../graph/database.js';
import { leaseOwner } from '../graph/leaseRepository.js';
import { RetrievalRepository } from '../graph/retrievalRepository.js';
import { createEmbedder, type EmbedderConfig } from '../embedding/index.js';
import { EmbeddingJob } from './embeddingJob.js';

export interface Neo4jConnectionSettings {
  uri: string;
  user: string;
  password: string;
  database?: string;
}

interface WorkerSettings {
  role: 'chronoql-embedding-worker';
  connection: Neo4jConnectionSettings;
  /** Without functions: it crosses the thread boundary by structured clone. */
  embedder: EmbedderConfig;
  owner: string;
  /** Between passes, the worker looks for new pending units this often (other processes ingest too). */
  idleMs: number;
}

/** A finished pass, answering every wake-up numbered up to `served`. */
export interface EmbeddingPass {
  served: number;
  embedded: number;
  /** False when another process held the store's embedding lease (and was doing the work). */
  leased: boolean;
  pending: number;
}

type FromWorker =
  | { type: 'progress'; embedded: number; elapsedMs: number; pending: number }
  | ({ type: 'pass' } & EmbeddingPass)
  | { type: 'error'; served: number; message: string };
type ToWorker = { type: 'wake'; seq: number } | { type: 'stop' };

export interface EmbeddingStatus {
  state: 'embedding' | 'idle' | 'waiting for another process' | 'failing' | 'stopped';
  /** Units this process has embedded since it started. */
  embeddedTotal: number;
  /** Units waiting for a vector in the store, as of the last report. */
  pending: number;
  /** Units per second over the current pass. */
  ratePerSecond: number;
  lastError: string | null;
}

export class BackgroundEmbedding {
  private wakeSeq = 0;
  private readonly waiters = new Set<{ seq: number; resolve: (pass: EmbeddingPass) => void; reject: (error: Error) => void }>();
  private readonly current: EmbeddingStatus = { state: 'idle', embeddedTotal: 0, pending: 0, ratePerSecond: 0, lastError: null };
  private embeddedAtPassStart = 0;
  private exited: Promise<void>;
  private alive = true;

  private constructor(
    private readonly worker: Worker,
    private readonly log: (level: 'info' | 'error', message: string, fields?: object) => void,
  ) {
    worker.on('message', (message: FromWorker) => this.onMessage(message));
    worker.on('error', (error) => this.fail(error.message));
    this.exited = new Promise((resolve) =>
      worker.once('exit', () => {
        this.alive = false;
        // An 'error' event came first when the worker crashed: keep its message.
        if (this.current.state !== 'stopped' && this.current.lastError === null) this.fail('the embedding worker exited');
        this.rejectAll(new Error(this.current.lastError ?? 'the embedding worker exited'));
        resolve();
      }),
    );
  }

  static start(options: {
    connection: Neo4jConnectionSettings;
    embedder: EmbedderConfig;
    idleMs?: number;
    log: (level: 'info' | 'error', message: string, fields?: object) => void;
  }): BackgroundEmbedding {
    const { log: _log, ...embedder } = options.embedder as EmbedderConfig & { log?: unknown };
    const settings: WorkerSettings = {
      role: 'chronoql-embedding-worker',
      connection: options.connection,
      embedder: embedder as EmbedderConfig,
      owner: leaseOwner(),
      idleMs: options.idleMs ?? 2000,
    };
    // Run from TypeScript sources (tests), the worker registers tsx first: Node 20 does not pass
    // the parent's `--import tsx` loader on to worker threads.
    const fromSources = import.meta.url.endsWith('.ts');
    const worker = fromSources
      ? new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`, {
          eval: true,
          workerData: settings,
        })
      : new Worker(new URL(import.meta.url), { workerData: settings });
    worker.unref();
    return new BackgroundEmbedding(worker, options.log);
  }

  status(): EmbeddingStatus {
    return { ...this.current };
  }

  /** Asks for a pass now; resolves with the first pass that started after this call. */
  pass(): Promise<EmbeddingPass> {
    if (!this.alive) return Promise.reject(new Error(`background embedding is not running: ${this.current.lastError ?? 'stopped'}`));
    const seq = ++this.wakeSeq;
    const waiting = new Promise<EmbeddingPass>((resolve, reject) => this.waiters.add({ seq, resolve, reject }));
    this.worker.postMessage({ type: 'wake', seq } satisfies ToWorker);
    return waiting;
  }

  async close(): Promise<void> {
    if (this.current.state === 'stopped') return;
    this.current.state = 'stopped';
    this.worker.postMessage({ type: 'stop' } satisfies ToWorker);
    await this.exited;
    this.rejectAll(new Error('background embedding stopped'));
  }

  private rejectAll(error: Error): void {
    for (const waiter of this.waiters) waiter.reject(error);
    this.waiters.clear();
  }

  private onMessage(message: FromWorker): void {
    if (this.current.state === 'stopped') return;
    if (message.type === 'progress') {
      if (this.current.state !== 'embedding') this.embeddedAtPassStart = this.current.embeddedTotal;
      this.current.state = 'embedding';
      this.current.embeddedTotal = this.embeddedAtPassStart + message.embedded;
      this.current.pending = message.pending;
      this.current.ratePerSecond = message.embedded / Math.max(message.elapsedMs / 1000, 1e-3);
      this.log('info', 'embedding', { embedded: this.current.embeddedTotal, pending: message.pending, perSecond: Math.round(this.current.ratePerSecond) });
      return;
    }
    if (message.type === 'error') {
      this.fail(message.message);
      this.settle(message.served, (waiter) => waiter.reject(new Error(message.message)));
      return;
    }
    this.current.state = message.leased ? 'idle' : 'waiting for another process';
    this.current.pending = message.pending;
    this.current.lastError = null;
    if (message.embedded > 0) this.log('info', 'embedding pass finished', { embedded: message.embedded, pending: message.pending });
    this.settle(message.served, (waiter) => waiter.resolve(message));
  }

  private settle(served: number, finish: (waiter: { resolve: (pass: EmbeddingPass) => void; reject: (error: Error) => void }) => void): void {
    for (const waiter of this.waiters) {
      if (waiter.seq <= served) {
        this.waiters.delete(waiter);
        finish(waiter);
      }
    }
  }

  /** Records a failure; a failure that repeats pass after pass is logged once. */
  private fail(message: string): void {
    if (message !== this.current.lastError) this.log('error', 'background embedding failed', { error: message });
    this.current.state = 'failing';
    this.current.lastError = message;
  }
}

async function runWorker(settings: WorkerSettings): Promise<void> {
  const port = parentPort!;
  const post = (message: FromWorker): void => port.postMessage(message);
  let stopping = false;
  let requested = 0;
  let wake: () => void = () => {};
  port.on('message', (message: ToWorker) => {
    if (message.type === 'stop') stopping = true;
    else requested = Math.max(requested, message.seq);
    wake();
  });
  const { uri, user, password, database } = settings.connection;
  const db = Database.connect(uri, user, password, database);
  let job: EmbeddingJob | undefined;
  let embedder: Awaited<ReturnType<typeof createEmbedder>> | undefined;
  try {
    while (!stopping) {
      const served = requested;
      try {
        embedder ??= await createEmbedder(settings.embedder);
        job ??= new EmbeddingJob(db, new RetrievalRepository(db), embedder, settings.owner);
        const outcome = await job.runPass(
          (progress) => post({ type: 'progress', ...progress }),
          () => stopping,
        );
        post({ type: 'pass', served, ...outcome, pending: await job.countPending() });
      } catch (error) {
        post({ type: 'error', served, message: (error as Error).message });
      }
      if (stopping || requested > served) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, settings.idleMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    await embedder?.close?.();
    await db.close();
    port.close();
  }
}

if (!isMainThread && (workerData as WorkerSettings | undefined)?.role === 'chronoql-embedding-worker') {
  await runWorker(workerData as WorkerSettings);
}
