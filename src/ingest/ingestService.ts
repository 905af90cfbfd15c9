import { createHash } from 'node:crypto';
import type { CypherRunner, Database } from '../graph/database.js';
import { IngestRepository } from '../graph/ingestRepository.js';
import { isDeadLocalOwner, LeaseRepository, leaseOwner } from '../graph/leaseRepository.js';
import { ChangeKind, SentenceLabel, SnapshotStatus, type SnapshotRecord } from '../domain/model.js';
import { SnapshotRepository } from '../graph/snapshotRepository.js';
import { isoDay } from '../domain/time.js';
import { planArticle, planIsEmpty } from './articlePlan.js';
import type { ArticlePlan } from '../domain/plan.js';
import { IngestBusyError, IngestLeaseLostError, SnapshotOrderError } from './errors.js';
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
  onProgress?: (articlesDone: number, articlesTotal: number) => void;
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
/** A snapshot may be dated at most this far past the server clock (clock skew), never years ahead. */
const MAX_FUTURE_MS = 24 * 3600 * 1000;

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
    if (options.takenAt.getTime() > Date.now() + MAX_FUTURE_MS) {
      throw new RangeError(
        `takenAt ${options.takenAt.toISOString()} is in the future (more than a day past this server's clock); a snapshot records what was known when it was taken (nothing written)`,
      );
    }
    await this.ensureRoom();
    return this.holdingLease(options.leaseWaitMs ?? 0, async (owner, leaseLost) => {
      const report = await this.ingestHoldingLease(articles, options, owner, leaseLost);
      await this.afterSnapshot();
      return report;
    });
  }

  /** Runs `work` alone among ingests of every process: under the store-wide ingest lease, renewed while it runs. */
  async holdingLease<T>(waitMs: number, work: (owner: string, leaseLost: () => boolean) => Promise<T>): Promise<T> {
    const owner = leaseOwner();
    const leases = new LeaseRepository(this.db);
    await takeLease(leases, owner, waitMs);
    let lost = false;
    let renewal: Promise<unknown> = Promise.resolve();
    const heartbeat = setInterval(() => {
      renewal = leases.acquire('ingest', owner, LEASE_SECONDS).then(
        (held) => (lost ||= !held),
        () => {}, // a failed renewal is retried at the next beat; the batch transaction checks the lease anyway
      );
    }, (LEASE_SECONDS * 1000) / 3);
    try {
      return await work(owner, () => lost);
    } finally {
      this.progress = null;
      clearInterval(heartbeat);
      // A renewal still in flight would take the lease again after the release, and the next ingest would find it held.
      await renewal;
      await leases.release('ingest', owner).catch(() => {}); // it runs out by itself
    }
  }

  private async ingestHoldingLease(articles: ArticleInput[], options: IngestOptions, owner: string, leaseLost: () => boolean): Promise<IngestReport> {
    const started = performance.now();
    const snapshots = new SnapshotRepository(this.db);
    const id = snapshotIdFor(options.takenAt);
    const complete = options.complete ?? false;
    const contentHash = createHash('sha256')
      .update(JSON.stringify({ id, complete, articles }))
      .digest('hex');
    const report = emptyReport(articles.length);

    // Any stored snapshot, not only the latest, may be the same one again: running the demo twice changes nothing.
    const stored = (await snapshots.list()).find((snapshot) => snapshot.id === id);
    if (stored && stored.status === SnapshotStatus.COMPLETE && stored.contentHash === contentHash) {
      return { ...report, snapshot: stored, alreadyIngested: true, durationMs: performance.now() - started };
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
    const context = { id, takenAt: options.takenAt };
    this.progress = { snapshotId: id, articlesDone: 0, articlesTotal: articles.length };
    // Every write transaction first renews the lease (and locks it): a process that lost it writes nothing.
    const holdLease = async (tx: CypherRunner): Promise<void> => {
      if (leaseLost() || !(await new LeaseRepository(tx).acquire('ingest', owner, LEASE_SECONDS))) throw new IngestLeaseLostError(id);
    };
    const batchSize = options.batchSize ?? 100;
    for (let start = 0; start < articles.length; start += batchSize) {
      const batch = articles.slice(start, start + batchSize);
      const outcome = await this.db.writeTransaction(async (tx) => {
        await holdLease(tx);
        const repository = new IngestRepository(tx);
        const states = await repository.loadStates(batch.map((article) => article.id));
        const plans: ArticlePlan[] = [];
        let resumed = 0;
        for (const article of batch) {
          const state = states.get(article.id)!;
          if (state.lastSnapshotId === id) resumed += 1;
          else plans.push(await planArticle(state, article, id, this.labeler));
        }
        const changeEvents = plans.length > 0 ? await repository.writePlans(context, plans) : 0;
        return { plans, resumed, changeEvents };
      });
      tally(report, outcome.plans);
      report.articlesResumed += outcome.resumed;
      report.changeEvents += outcome.changeEvents;
      if (outcome.changeEvents > 0) this.onCommitted();
      this.progress.articlesDone = Math.min(start + batchSize, articles.length);
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
    throw new SnapshotOrderError(
      `a different snapshot dated ${id} is already stored (its content differs); snapshots cannot be rewritten (nothing written)`,
    );
  }
  if (latest.id !== id && latest.status === SnapshotStatus.INGESTING) {
    throw new SnapshotOrderError(
      `snapshot ${latest.id} was interrupted before it finished; re-run its ingest to resume it before adding ${id} (nothing written)`,
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
