import { outsideRequestScope } from '../platform/requestScope.js';
import { createHash } from 'node:crypto';
import { isDatabaseUnreachable, neo4jErrorCode, type CypherRunner, type Database } from '../graph/database.js';
import { IngestRepository } from '../graph/ingestRepository.js';
import { isDeadLocalOwner, LeaseRepository, leaseOwner } from '../graph/leaseRepository.js';
import { ChangeKind, SentenceLabel, SnapshotStatus, type SnapshotFailure, type SnapshotRecord } from '../domain/model.js';
import { SnapshotRepository } from '../graph/snapshotRepository.js';
import { isoDay } from '../domain/time.js';
import { planIsEmpty } from './articlePlan.js';
import { prepareBatch, settledLater, sharesArticle, type PreparedBatch } from './batchPlans.js';
import type { ArticlePlan } from '../domain/plan.js';
import { InvalidInputError, quoteInput } from '../domain/errors.js';
import { IngestBusyError, IngestLeaseLostError, IngestRevokedError, IngestRolledBackError, SnapshotOrderError } from './errors.js';
import { transactionBatches } from './inputLimits.js';
import { rollBackSnapshot, type RollbackReport } from './snapshotRollback.js';
import { ExactMatchLabeler, type SentenceLabeler } from './sentenceLabeler.js';
import type { ArticleInput } from './snapshotReader.js';

export interface IngestOptions {
  takenAt: Date;
  source: string;
  /** The snapshot lists every article: those missing from it are removed. */
  complete?: boolean;
  batchSize?: number;
  /** How long to wait for another process's ingest to finish (or its lease to run out) before refusing. */
  leaseWaitMs?: number;
  /** An operator (the CLI, an admin) may date a snapshot up to a day ahead; anyone else only within MAX_CLOCK_SKEW_MS. */
  datedAheadAllowed?: boolean;
  /**
   * Asked before every batch: true once the credential that started the ingest was revoked. The
   * ingest then stops and is rolled back, since what that credential wrote is no longer trusted
   * and a COMPLETE snapshot cannot be taken back.
   */
  revoked?: () => Promise<boolean>;
  onProgress?: (articlesDone: number, articlesTotal: number) => void;
}

/** An ingest whose checks passed: its snapshot as recorded when it began, and its outcome to come. */
export interface StartedIngest {
  /** INGESTING, or COMPLETE when the same snapshot was already stored. */
  snapshot: SnapshotRecord;
  /** Settles when the snapshot is written (or found stored) and the ingest lease is released. */
  finished: Promise<IngestReport>;
}

export interface SentenceTally {
  total: number;
  unchanged: number;
  changed: number;
  new: number;
  deleted: number;
  /** Sentences of articles seen for the first time: they have no label. */
  initial: number;
}

export interface FactTally {
  new: number;
  updated: number;
  /** False changes (typo, diacritics, abbreviation, qualifier) kept as new versions of the same fact. */
  refined: number;
  removed: number;
  initial: number;
}

export interface IngestReport {
  snapshot: SnapshotRecord;
  /** The same snapshot had already been ingested completely; nothing was written. */
  alreadyIngested: boolean;
  articles: number;
  /** Articles skipped because an interrupted run of this snapshot had already written them. */
  articlesResumed: number;
  articlesAdded: number;
  articlesChanged: number;
  articlesRemoved: number;
  sentences: SentenceTally;
  facts: FactTally;
  changeEvents: number;
  durationMs: number;
}

/** The ingest lease lasts this long without renewal; a process killed mid-ingest blocks others at most this long. */
const LEASE_SECONDS = 30;
const LEASE_POLL_MS = 250;
/**
 * How far past the server clock a writer may date a snapshot (the two clocks may differ). A
 * snapshot dated ahead blocks every ingest dated before it (they must come in date order).
 */
export const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;
/** An operator may date a snapshot this far ahead (a day boundary in a zone east of UTC), never years. */
const MAX_OPERATOR_AHEAD_MS = 24 * 3600 * 1000;

export function snapshotIdFor(takenAt: Date): string {
  const day = isoDay(takenAt);
  return takenAt.getTime() === Date.parse(`${day}T00:00:00.000Z`) ? day : takenAt.toISOString();
}

/**
 * Applies a dated snapshot to the temporal graph. Batches of articles commit atomically,
 * each marking its articles with the snapshot id, so a re-run skips what was written and an
 * interrupted ingest resumes where it stopped.
 */
export class IngestService {
  /** The ingest this process is running, if any, and how far it got (for /metrics). */
  progress: { snapshotId: string; articlesDone: number; articlesTotal: number } | null = null;
  /** Settles when the last ingest started here has finished writing. */
  private running: Promise<void> = Promise.resolve();

  /**
   * `afterSnapshot` runs after every ingest, still under the ingest lease, also when the snapshot
   * was already stored: what follows the store (the living benchmark) catches up there, and a
   * crash between the two is mended by the next ingest of any snapshot.
   */
  constructor(
    private readonly db: Database,
    private readonly onCommitted: () => void = () => {},
    private readonly labeler: SentenceLabeler = new ExactMatchLabeler(),
    private readonly afterSnapshot: () => Promise<void> = async () => {},
    /** Throws (StorageFullError) when the disk is too full to start writing. */
    private readonly ensureRoom: () => Promise<void> = async () => {},
  ) {}

  /**
   * Ingests under the store-wide ingest lease, so ingests from any process run one at a time and
   * each checks date order against what the previous one committed.
   */
  async ingest(articles: ArticleInput[], options: IngestOptions): Promise<IngestReport> {
    return (await this.start(articles, options)).finished;
  }

  /**
   * Checks everything that can be checked before writing (the date, free disk, the ingest lease,
   * date order against the stored snapshots) and records the snapshot as INGESTING, then returns
   * while the snapshot is written. The writing belongs to no caller: it is not bound by the
   * deadline or the session share of the request that started it, and runs on when that ends.
   */
  async start(articles: ArticleInput[], options: IngestOptions): Promise<StartedIngest> {
    const ahead = options.datedAheadAllowed ? MAX_OPERATOR_AHEAD_MS : MAX_CLOCK_SKEW_MS;
    if (options.takenAt.getTime() > Date.now() + ahead) {
      throw new InvalidInputError(
        `takenAt ${options.takenAt.toISOString()} is in the future (more than ${options.datedAheadAllowed ? 'a day' : `${MAX_CLOCK_SKEW_MS / 60_000} minutes`} past this server's clock, ${new Date().toISOString()}); a snapshot records what was known when it was taken${options.datedAheadAllowed ? '' : ' (an admin may date one up to a day ahead)'} (nothing written)`,
      );
    }
    await this.ensureRoom();
    const lease = await this.acquireLease(options.leaseWaitMs ?? 0);
    let begun: BegunIngest;
    try {
      begun = await this.begin(articles, options, lease);
    } catch (error) {
      await lease.release();
      throw error;
    }
    const finished = outsideRequestScope(async () => {
      try {
        const report = await begun.write();
        await this.afterSnapshot();
        return report;
      } finally {
        await lease.release();
      }
    });
    // Whoever started it awaits `finished` later; until then its failure is not unhandled.
    finished.catch(() => {});
    this.running = Promise.allSettled([this.running, finished]).then(() => {});
    return { snapshot: begun.snapshot, finished };
  }

  /** Resolves once no ingest this service started is still writing (a server waits for it before it closes the driver). */
  async idle(): Promise<void> {
    await this.running;
  }

  /** Runs `work` alone among ingests of every process: under the store-wide ingest lease, renewed while it runs. */
  async holdingLease<T>(waitMs: number, work: (owner: string, leaseLost: () => boolean) => Promise<T>): Promise<T> {
    const lease = await this.acquireLease(waitMs);
    try {
      return await work(lease.owner, lease.lost);
    } finally {
      await lease.release();
    }
  }

  /** The store-wide ingest lease, taken (waiting at most `waitMs` for another holder) and renewed until released. */
  private async acquireLease(waitMs: number): Promise<HeldLease> {
    const owner = leaseOwner();
    const leases = new LeaseRepository(this.db);
    await takeLease(leases, owner, waitMs);
    let lost = false;
    let renewal: Promise<unknown> = Promise.resolve();
    const heartbeat = setInterval(
      () => {
        renewal = leases.acquire('ingest', owner, LEASE_SECONDS).then(
          (held) => (lost ||= !held),
          () => {}, // a failed renewal is retried at the next beat; the batch transaction checks the lease anyway
        );
      },
      (LEASE_SECONDS * 1000) / 3,
    );
    return {
      owner,
      lost: () => lost,
      release: async () => {
        this.progress = null;
        clearInterval(heartbeat);
        // A renewal still in flight would take the lease again after the release, and the next ingest would find it held.
        await renewal;
        await leases.release('ingest', owner).catch(() => {}); // it runs out by itself
      },
    };
  }

  /**
   * The snapshot with this id as a client sees it: stored, or FAILED when its ingest was rolled
   * back, or when it is still INGESTING but nobody is writing it (its process died, or lost Neo4j
   * or the lease): what it wrote is kept for a re-run to resume. Null when there is none.
   */
  async snapshot(id: string): Promise<SnapshotRecord | null> {
    const found = await new SnapshotRepository(this.db).find(id);
    return found && (await this.withOutcome(found));
  }

  /** A stored snapshot as a client sees it: INGESTING only while some process holds the ingest lease, FAILED after that. */
  async withOutcome(snapshot: SnapshotRecord): Promise<SnapshotRecord> {
    if (snapshot.status !== SnapshotStatus.INGESTING) return snapshot;
    const holder = await new LeaseRepository(this.db).holder('ingest');
    if (holder && !isDeadLocalOwner(holder.owner)) return snapshot;
    // An ingest finishes its snapshot before it releases the lease, so one that finished between the two reads shows here.
    const current = (await new SnapshotRepository(this.db).find(snapshot.id)) ?? snapshot;
    if (current.status !== SnapshotStatus.INGESTING) return current;
    return { ...current, status: SnapshotStatus.FAILED, failure: interruptedIngest(current.id) };
  }

  /**
   * Under the ingest lease: finishes a rollback cut short, finds the same snapshot stored or
   * checks date order, and records the snapshot as INGESTING; `write` then writes it.
   */
  private async begin(articles: ArticleInput[], options: IngestOptions, lease: HeldLease): Promise<BegunIngest> {
    const started = performance.now();
    const snapshots = new SnapshotRepository(this.db);
    const id = snapshotIdFor(options.takenAt);
    const complete = options.complete ?? false;
    const contentHash = createHash('sha256').update(JSON.stringify({ id, complete, articles })).digest('hex');
    const report = emptyReport(articles.length);
    const holdLease = this.leaseGuard(lease.owner, lease.lost, id);
    // A rollback cut short (its process died) is finished before anything else is written.
    const unfinished = await snapshots.rollingBack();
    if (unfinished) await rollBackSnapshot(this.db, unfinished, holdLease, FINISHED_ROLLBACK, true);

    // Any stored snapshot, not only the latest, may be the same one again: running the demo twice changes nothing.
    const stored = (await snapshots.list()).find((snapshot) => snapshot.id === id);
    if (stored && stored.status === SnapshotStatus.COMPLETE && stored.contentHash === contentHash) {
      return { snapshot: stored, write: async () => ({ ...report, snapshot: stored, alreadyIngested: true, durationMs: performance.now() - started }) };
    }
    const latest = await snapshots.latest();
    if (latest) checkOrder(latest, id, options.takenAt, contentHash);
    const snapshot = await snapshots.begin({
      id,
      takenAt: options.takenAt,
      source: options.source,
      complete,
      contentHash,
      articleCount: articles.length,
    });
    return {
      snapshot,
      write: async () => {
        try {
          return await this.writeSnapshot(articles, options, snapshot, holdLease, report, started);
        } catch (error) {
          throw await this.afterWriteFailure(snapshot, error, holdLease);
        }
      },
    };
  }

  /** Every write transaction first renews the lease (and locks it): a process that lost it writes nothing. */
  private leaseGuard(owner: string, leaseLost: () => boolean, snapshotId: string): (tx: CypherRunner) => Promise<void> {
    return async (tx) => {
      if (leaseLost() || !(await new LeaseRepository(tx).acquire('ingest', owner, LEASE_SECONDS))) throw new IngestLeaseLostError(snapshotId);
    };
  }

  /**
   * What a failure while writing leaves. Lost contact (Neo4j down, the lease taken) leaves the
   * snapshot INGESTING, for a re-run to resume where it stopped. Anything else (Neo4j refused a
   * write, the credential was revoked) would fail again on a re-run: the snapshot is rolled back,
   * so that it does not block every later one. When the rollback fails too, the snapshot stays
   * INGESTING and `chronoql snapshots abandon` finishes the rollback.
   */
  private async afterWriteFailure(snapshot: SnapshotRecord, error: unknown, holdLease: (tx: CypherRunner) => Promise<void>): Promise<unknown> {
    if (error instanceof IngestLeaseLostError || isDatabaseUnreachable(error)) return error;
    const rolledBack =
      error instanceof IngestRevokedError
        ? new IngestRevokedError(snapshot.id, { rolledBack: true })
        : new IngestRolledBackError(snapshot.id, refusalReason(error), { cause: error });
    try {
      await rollBackSnapshot(this.db, snapshot, holdLease, { code: rolledBack.code, message: rolledBack.message });
    } catch {
      return error;
    }
    this.onCommitted(); // the change feed follows the sequence back now, not at its next tick
    return rolledBack;
  }

  /**
   * Undoes an interrupted snapshot (one still INGESTING: killed mid-way, or its rollback failed)
   * and takes it out of the stored snapshots (it is reported FAILED), under the ingest lease, so
   * that later snapshots can go in.
   */
  async abandon(snapshotId: string, leaseWaitMs = 0): Promise<RollbackReport & { snapshot: SnapshotRecord }> {
    return this.holdingLease(leaseWaitMs, async (owner, leaseLost) => {
      const snapshots = new SnapshotRepository(this.db);
      const snapshot = (await snapshots.list()).find((stored) => stored.id === snapshotId);
      if (!snapshot) throw new InvalidInputError(`no snapshot has the id ${quoteInput(snapshotId)} (\`chronoql snapshots list\` shows them); nothing changed`);
      if (snapshot.status !== SnapshotStatus.INGESTING) {
        throw new SnapshotOrderError(
          `snapshot ${snapshotId} is ${snapshot.status}; only an interrupted snapshot (INGESTING) can be abandoned (nothing changed)`,
        );
      }
      const rolledBack = await rollBackSnapshot(this.db, snapshot, this.leaseGuard(owner, leaseLost, snapshotId), abandonedIngest(snapshotId));
      this.onCommitted();
      return { ...rolledBack, snapshot };
    });
  }

  private async writeSnapshot(
    articles: ArticleInput[],
    options: IngestOptions,
    snapshot: SnapshotRecord,
    holdLease: (tx: CypherRunner) => Promise<void>,
    report: Omit<IngestReport, 'snapshot'>,
    started: number,
  ): Promise<IngestReport> {
    const snapshots = new SnapshotRepository(this.db);
    const { id } = snapshot;
    const complete = options.complete ?? false;
    const context = { id, takenAt: options.takenAt };
    this.progress = { snapshotId: id, articlesDone: 0, articlesTotal: articles.length };
    const batches = [...transactionBatches(articles, options.batchSize ?? 100)];
    // The next batch is planned while Neo4j writes this one: planning is Node's work, writing
    // Neo4j's, and on a machine of few cores neither waits for the other. Under the ingest lease
    // no one else writes articles, so states read before a batch commits stay true for the
    // batches after it, unless one names an article of the batch being written.
    const prepare = (batch: ArticleInput[]): Promise<PreparedBatch> => settledLater(prepareBatch(this.db, this.labeler, batch, id));
    let next: Promise<PreparedBatch> | null = batches[0] ? prepare(batches[0]) : null;
    for (const [i, batch] of batches.entries()) {
      const prepared = await next!;
      const following = batches[i + 1];
      next = following && !sharesArticle(batch, following) ? prepare(following) : null;
      if (await options.revoked?.()) throw new IngestRevokedError(id);
      const changeEvents = await this.db.writeTransaction(async (tx) => {
        await holdLease(tx);
        return prepared.plans.length > 0 ? new IngestRepository(tx).writePlans(context, prepared.plans) : 0;
      });
      next ??= following ? prepare(following) : null;
      tally(report, prepared.plans);
      report.articlesResumed += prepared.resumed;
      report.changeEvents += changeEvents;
      if (changeEvents > 0) this.onCommitted();
      this.progress.articlesDone += batch.length;
      options.onProgress?.(this.progress.articlesDone, articles.length);
    }
    if (complete) {
      const presentIds = articles.map((article) => article.id);
      report.articlesRemoved = await this.db.writeTransaction(async (tx) => {
        await holdLease(tx);
        return new IngestRepository(tx).removeArticlesMissingFrom(context, presentIds);
      });
      report.changeEvents += report.articlesRemoved;
      if (report.articlesRemoved > 0) this.onCommitted();
    }
    const finished = await snapshots.finish(snapshot.id);
    return { ...report, snapshot: finished, durationMs: performance.now() - started };
  }
}

interface HeldLease {
  owner: string;
  /** Whether a renewal found another owner holding it: the next batch transaction then refuses to write. */
  lost: () => boolean;
  release(): Promise<void>;
}

interface BegunIngest {
  snapshot: SnapshotRecord;
  write(): Promise<IngestReport>;
}

/** The reason kept for a rollback found cut short, when the one that began it recorded none. */
const FINISHED_ROLLBACK: SnapshotFailure = { code: 'INGEST_FAILED', message: 'its ingest failed and was rolled back; nothing of it is stored' };

function abandonedIngest(snapshotId: string): SnapshotFailure {
  return {
    code: 'INGEST_ABANDONED',
    message: `snapshot ${snapshotId} was interrupted and then abandoned (\`chronoql snapshots abandon\`); nothing of it is stored`,
  };
}

function interruptedIngest(snapshotId: string): SnapshotFailure {
  return {
    code: 'INGEST_INTERRUPTED',
    message: `the ingest of snapshot ${snapshotId} stopped before it finished (its process ended, or it lost Neo4j or the ingest lease); what it wrote is kept: run the same ingest again to resume it, or discard it with \`chronoql snapshots abandon ${snapshotId}\``,
  };
}

/** What Neo4j refused, in its first sentence (too large to index, out of memory): the rest names Neo4j's internals. */
function refusalReason(error: unknown): string {
  const code = neo4jErrorCode(error);
  const message = String((error as Error)?.message ?? error);
  return code ? `Neo4j refused a write: ${code}: ${message.split(/[.,]\s|\n/)[0]!.slice(0, 160)}` : message;
}

/**
 * Takes the ingest lease, polling while another process holds it, for at most `waitMs`. A holder
 * that was a process on this host and is gone (killed mid-ingest) is replaced at once, so a
 * re-run resumes without waiting for its lease to run out.
 */
async function takeLease(leases: LeaseRepository, owner: string, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (await leases.acquire('ingest', owner, LEASE_SECONDS)) return;
    const holder = await leases.holder('ingest');
    if (holder && isDeadLocalOwner(holder.owner) && (await leases.takeOver('ingest', owner, holder.owner, LEASE_SECONDS))) return;
    if (Date.now() >= deadline) throw new IngestBusyError(holder?.owner ?? 'another process', holder?.until ?? null);
    await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
  }
}

function checkOrder(latest: SnapshotRecord, id: string, takenAt: Date, contentHash: string): void {
  if (latest.takenAt.getTime() > takenAt.getTime()) {
    throw new SnapshotOrderError(
      `snapshot ${id} is older than the latest stored snapshot ${latest.id}; snapshots must be ingested in date order (nothing written)`,
    );
  }
  if (latest.id === id && latest.contentHash !== contentHash) {
    throw new SnapshotOrderError(`a different snapshot dated ${id} is already stored (its content differs); snapshots cannot be rewritten (nothing written)`);
  }
  if (latest.id !== id && latest.status === SnapshotStatus.INGESTING) {
    throw new SnapshotOrderError(
      `snapshot ${latest.id} was interrupted before it finished; re-run its ingest to resume it, or discard it with \`chronoql snapshots abandon ${latest.id}\`, before adding ${id} (nothing written)`,
    );
  }
}

function emptyReport(articles: number): Omit<IngestReport, 'snapshot'> {
  return {
    alreadyIngested: false,
    articles,
    articlesResumed: 0,
    articlesAdded: 0,
    articlesChanged: 0,
    articlesRemoved: 0,
    sentences: { total: 0, unchanged: 0, changed: 0, new: 0, deleted: 0, initial: 0 },
    facts: { new: 0, updated: 0, refined: 0, removed: 0, initial: 0 },
    changeEvents: 0,
    durationMs: 0,
  };
}

function tally(report: Omit<IngestReport, 'snapshot'>, plans: ArticlePlan[]): void {
  for (const plan of plans) {
    report.sentences.total += plan.sentenceCount;
    if (plan.isNewArticle) {
      report.articlesAdded += 1;
      report.sentences.initial += plan.sentenceCount;
      report.facts.initial += plan.createFacts.length;
      continue;
    }
    if (!planIsEmpty(plan)) report.articlesChanged += 1;
    const created = (label: SentenceLabel): number => plan.createSentences.filter((s) => s.origin === label).length;
    const changes = (kind: ChangeKind): number => plan.changes.filter((change) => change.kind === kind).length;
    report.sentences.changed += created(SentenceLabel.CHANGED);
    report.sentences.new += created(SentenceLabel.NEW);
    report.sentences.unchanged += plan.sentenceCount - created(SentenceLabel.CHANGED) - created(SentenceLabel.NEW);
    report.sentences.deleted += changes(ChangeKind.SENTENCE_DELETED);
    report.facts.new += changes(ChangeKind.FACT_NEW);
    report.facts.updated += changes(ChangeKind.FACT_UPDATED);
    report.facts.refined += changes(ChangeKind.FACT_REFINED);
    report.facts.removed += changes(ChangeKind.FACT_REMOVED);
  }
}
