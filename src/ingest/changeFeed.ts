import { EventEmitter } from 'node:events';
import { InvalidInputError } from '../domain/errors.js';
import type { ChangeEventRecord } from '../domain/model.js';
import type { ChangeFilter, ReadRepository } from '../graph/readRepository.js';
import { FairShares } from '../platform/fairShares.js';
import { outsideRequestScope } from '../platform/requestScope.js';

/** Events one subscriber reads from the store at a time: all it ever holds in memory. */
const PAGE = 500;
/** The latest events, kept once for every subscriber that keeps up, so they need not each read them from the store. */
const RECENT = 2 * PAGE;
/**
 * Subscribers reading pages of older changes from the store at once, in all; others wait their
 * turn (callers in turn). So a replay's memory is bounded however many subscribe with afterSeq: 0.
 */
const REPLAYS_AT_ONCE = { total: 16, perCaller: 4 };

/**
 * Changes this subscriber was given were withdrawn: the snapshot that wrote them was rolled back
 * (it failed part-way, or was abandoned), and the sequence numbers after `resumeAfterSeq` will be
 * given to other changes. Resubscribe with `afterSeq: resumeAfterSeq`, after dropping what was
 * received past it.
 */
export class ChangesWithdrawnError extends Error {
  readonly extensions: { code: 'CHANGES_WITHDRAWN'; resumeAfterSeq: number };

  constructor(resumeAfterSeq: number) {
    super(`changes after seq ${resumeAfterSeq} were withdrawn (their snapshot was rolled back); resubscribe with afterSeq: ${resumeAfterSeq}`);
    this.name = 'ChangesWithdrawnError';
    this.extensions = { code: 'CHANGES_WITHDRAWN', resumeAfterSeq };
  }
}

export interface ChangeSubscription extends ChangeFilter {
  /** Replay stored changes after this sequence number first; null means live changes only. */
  afterSeq?: number | null;
}

function passes(event: ChangeEventRecord, filter: ChangeFilter): boolean {
  return (!filter.articleIds || filter.articleIds.includes(event.articleId)) && (!filter.kinds || filter.kinds.includes(event.kind));
}

/**
 * Tails the ChangeEvent sequence in Neo4j and wakes subscribers when it moves. Tailing the
 * database, rather than trusting in-process notifications, makes changes written by another
 * process (a `chronoql ingest` beside `chronoql serve`) arrive too. Sequence numbers are
 * gap-free and commit in order, so "everything after seq N" is well defined.
 *
 * Each subscriber takes the events when it asks for the next one, from the feed's window of
 * recent events while it keeps up, else from the store a page at a time: it is fed as fast
 * as it reads, however fast the ingest writes, and the feed holds no more than a page for it.
 * A reader that falls far behind is slower to serve but costs no more memory.
 */
export class ChangeFeed {
  private readonly emitter = new EventEmitter();
  private latestSeq = 0;
  /** The events up to latestSeq, gap-free, at most RECENT of them. */
  private recent: ChangeEventRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private started = false;
  private stopped = false;
  /** Aborted once stop() has finished: it ends every subscription. */
  private readonly stopping = new AbortController();
  private readonly replays = new FairShares({ ...REPLAYS_AT_ONCE, waitMs: Number.POSITIVE_INFINITY }, 'change replays');

  constructor(
    private readonly repository: ReadRepository,
    private readonly onPollError: (error: unknown) => void = () => {},
    private readonly pollIntervalMs = 200,
  ) {
    this.emitter.setMaxListeners(0);
  }

  async start(): Promise<void> {
    this.latestSeq = await this.repository.latestChangeSeq();
    this.started = true;
    this.schedule();
  }

  /** Calls `listener` with the latest sequence number whenever new events are read; returns what stops it. */
  onAdvance(listener: (latestSeq: number) => void): () => void {
    this.emitter.on('advance', listener);
    return () => this.emitter.off('advance', listener);
  }

  /**
   * Looks for new events now rather than at the next tick (called after an in-process ingest).
   * A feed that was never started (a CLI ingest, a test runtime) has no subscribers and no
   * position: polling it would read the whole change history after every batch.
   */
  poke(): void {
    // The ingest that pokes may run in a request; the poll it starts serves every subscriber.
    if (this.started && !this.stopped) outsideRequestScope(() => void this.poll());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling;
    this.stopping.abort();
  }

  /**
   * The feed's last sequence number, once `afterSeq` is known to be a place it can resume from.
   * Past the counter, either a rollback withdrew the changes after it (CHANGES_WITHDRAWN: resume
   * from the counter) or no change ever had that number: a clear refusal, since waiting for it
   * would silently skip every change up to it.
   */
  async checkResumePoint(afterSeq: number | null): Promise<number> {
    const { latest, highest } = await this.repository.changeSequence();
    if (afterSeq === null || afterSeq <= latest) return latest;
    if (afterSeq <= highest) throw new ChangesWithdrawnError(latest);
    throw new InvalidInputError(
      `afterSeq ${afterSeq} is past the last change ever recorded (seq ${latest}); resume after the last seq you were sent, or from 0 for the whole feed`,
    );
  }

  /**
   * Stored events after `afterSeq` (after the current last one when null), then new ones as
   * they are written, in order, each once. Ending it (`return()`) takes effect at once, also
   * while it waits for a change.
   */
  subscribe(subscription: ChangeSubscription, signal?: AbortSignal): AsyncGenerator<ChangeEventRecord> {
    // A generator waiting on its wake-up promise would queue return() until the next change that
    // passes the filter (possibly never), keeping its listener and its request alive: the abort ends the wait.
    const ended = new AbortController();
    const stream = this.stream(subscription, AbortSignal.any([ended.signal, this.stopping.signal, ...(signal ? [signal] : [])]));
    const end = stream.return.bind(stream);
    stream.return = (value) => {
      ended.abort();
      return end(value);
    };
    return stream;
  }

  private async *stream(subscription: ChangeSubscription, signal: AbortSignal): AsyncGenerator<ChangeEventRecord> {
    let wake: (() => void) | undefined;
    // Only counters read after this subscription began: the feed's own may predate a store that was emptied,
    // and reading up to it would skip the events written since.
    let known = 0;
    // Sequence numbers past this were withdrawn (their snapshot was rolled back) and will be handed out again.
    let withdrawnAfter: number | null = null;
    const onAdvance = (latest: number): void => {
      known = Math.max(known, latest);
      wake?.();
    };
    const onWithdrawn = (latest: number): void => {
      withdrawnAfter = Math.min(withdrawnAfter ?? latest, latest);
      known = latest;
      wake?.();
    };
    const onAbort = (): void => wake?.();
    this.emitter.on('advance', onAdvance);
    this.emitter.on('withdrawn', onWithdrawn);
    signal.addEventListener('abort', onAbort);
    try {
      known = Math.max(known, await this.checkResumePoint(subscription.afterSeq ?? null));
      let cursor = subscription.afterSeq ?? known;
      while (!signal.aborted) {
        if (withdrawnAfter !== null) {
          if (cursor > withdrawnAfter) throw new ChangesWithdrawnError(withdrawnAfter);
          withdrawnAfter = null;
        }
        if (cursor >= known) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        const recent = this.recentAfter(cursor, subscription);
        // A page read from the store is held until it is handed out; only so many are held at once.
        const release = recent ? null : await this.replays.hold();
        try {
          const { events, through } = recent ?? (await this.stored(cursor, known, subscription));
          for (const event of events) {
            if (signal.aborted) return;
            yield event;
            cursor = event.seq;
          }
          cursor = through;
        } finally {
          release?.();
        }
      }
    } finally {
      this.emitter.off('advance', onAdvance);
      this.emitter.off('withdrawn', onWithdrawn);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** The window's events after `cursor` that pass the filter, a page scanned at most; null when the window no longer holds cursor + 1. */
  private recentAfter(cursor: number, filter: ChangeFilter): { events: ChangeEventRecord[]; through: number } | null {
    const start = cursor + 1 - (this.recent[0]?.seq ?? Infinity);
    if (!(start >= 0 && start < this.recent.length)) return null;
    const scanned = this.recent.slice(start, start + PAGE);
    return { events: scanned.filter((event) => passes(event, filter)), through: scanned.at(-1)!.seq };
  }

  /** A page of stored events after `cursor` that pass the filter, and the seq it reaches. */
  private async stored(cursor: number, upTo: number, filter: ChangeFilter): Promise<{ events: ChangeEventRecord[]; through: number }> {
    const events = await this.repository.changesBetween(cursor, upTo, filter, PAGE);
    // A short page holds every event up to `upTo` that passes the filter.
    return { events, through: events.length < PAGE ? upTo : events.at(-1)!.seq };
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.poll().finally(() => this.schedule());
    }, this.pollIntervalMs);
    this.timer.unref();
  }

  private poll(): Promise<void> {
    this.polling ??= this.readNewEvents().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async readNewEvents(): Promise<void> {
    try {
      // One counter read per tick; events are fetched only when there are new ones.
      const latest = await this.repository.latestChangeSeq();
      if (latest === this.latestSeq) return;
      if (latest < this.latestSeq) {
        // A counter behind us means a snapshot was rolled back, or the store emptied or restored: follow it back.
        this.recent = [];
        this.latestSeq = latest;
        this.emitter.emit('withdrawn', latest);
        return;
      }
      // Only the last window's worth is read: a subscriber further behind reads the store.
      const last = this.recent.at(-1);
      let from = Math.max(this.latestSeq, latest - RECENT);
      if (from > this.latestSeq || !last) this.recent = [];
      // The window's last event is read again: finding it unchanged shows the store was not emptied and refilled past it between two polls.
      else from = last.seq - 1;
      while (from < latest) {
        const page = await this.repository.changesBetween(from, latest, {}, PAGE);
        const again = this.recent.at(-1);
        if (again && page[0]?.seq === again.seq) {
          const same = page[0].snapshotId === again.snapshotId && page[0].recordedAt.getTime() === again.recordedAt.getTime();
          page.shift();
          if (!same) this.recent = [];
        }
        if (page.length === 0) break;
        this.recent.push(...page);
        this.recent.splice(0, Math.max(0, this.recent.length - RECENT));
        from = this.latestSeq = page.at(-1)!.seq;
        this.emitter.emit('advance', this.latestSeq);
      }
    } catch (error) {
      this.onPollError(error);
    }
  }
}
