import { EventEmitter } from 'node:events';
import type { ChangeEventRecord } from '../domain/model.js';
import type { ChangeFilter, ReadRepository } from '../graph/readRepository.js';

const PAGE = 500;
/** Live events one subscriber may have waiting (it reads slower than they come) before it is cut off. */
export const DEFAULT_SUBSCRIBER_BUFFER = 10_000;

/**
 * A subscriber fell more than its buffer behind. It lost nothing: it resumes with
 * `afterSeq: resumeAfterSeq`, the last event it was given.
 */
export class SubscriberTooSlowError extends Error {
  readonly extensions: { code: 'SUBSCRIBER_TOO_SLOW'; resumeAfterSeq: number };

  constructor(buffer: number, resumeAfterSeq: number) {
    super(`subscriber too slow: more than ${buffer} changes waiting; resubscribe with afterSeq: ${resumeAfterSeq}`);
    this.name = 'SubscriberTooSlowError';
    this.extensions = { code: 'SUBSCRIBER_TOO_SLOW', resumeAfterSeq };
  }
}

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
  return (
    (!filter.articleIds || filter.articleIds.includes(event.articleId)) &&
    (!filter.kinds || filter.kinds.includes(event.kind))
  );
}

/**
 * Tails the ChangeEvent sequence in Neo4j and fans new events out to subscribers. Tailing
 * the database, rather than trusting in-process notifications, makes changes written by
 * another process (a `chronoql ingest` beside `chronoql serve`) arrive too. Sequence
 * numbers are gap-free and commit in order, so "everything after seq N" is well defined.
 */
export class ChangeFeed {
  private readonly emitter = new EventEmitter();
  private latestSeq = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private started = false;
  private stopped = false;
  /** Aborted once stop() has finished: it ends every subscription. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly repository: ReadRepository,
    private readonly onPollError: (error: unknown) => void = () => {},
    private readonly pollIntervalMs = 200,
    private readonly subscriberBuffer = DEFAULT_SUBSCRIBER_BUFFER,
  ) {
    this.emitter.setMaxListeners(0);
  }

  async start(): Promise<void> {
    this.latestSeq = await this.repository.latestChangeSeq();
    this.started = true;
    this.schedule();
  }

  /**
   * Looks for new events now rather than at the next tick (called after an in-process ingest).
   * A feed that was never started (a CLI ingest, a test runtime) has no subscribers and no
   * position: polling it would read the whole change history after every batch.
   */
  poke(): void {
    if (this.started && !this.stopped) void this.poll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling;
    this.stopping.abort();
  }

  /**
   * Stored events after `afterSeq`, then live ones, in order, each once. Live events are
   * buffered from the start, before the replay is read, so none fall between the two; a
   * hole in the live stream is filled from the database. A subscriber that lets more than
   * `subscriberBuffer` live events wait is ended with SubscriberTooSlowError, so memory stays bounded.
   * Ending it (`return()`) takes effect at once, also while it waits for a change.
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
    const waiting: ChangeEventRecord[] = [];
    let overflowed = false;
    let wake: (() => void) | undefined;
    const onChange = (event: ChangeEventRecord): void => {
      if (waiting.length < this.subscriberBuffer) waiting.push(event);
      else overflowed = true;
      wake?.();
    };
    const onAbort = (): void => wake?.();
    // Sequence numbers past `seq` will be handed out again: the ones waiting are gone, and one already given ends the subscription.
    let withdrawnAfter: number | null = null;
    const onWithdrawn = (seq: number): void => {
      for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i]!.seq > seq) waiting.splice(i, 1);
      withdrawnAfter = seq;
      wake?.();
    };
    this.emitter.on('change', onChange);
    this.emitter.on('withdrawn', onWithdrawn);
    signal.addEventListener('abort', onAbort);
    try {
      const replayUpTo = await this.repository.latestChangeSeq();
      // Past the counter only if it went back since this subscriber was sent those changes.
      if ((subscription.afterSeq ?? 0) > replayUpTo) throw new ChangesWithdrawnError(replayUpTo);
      let cursor = subscription.afterSeq ?? replayUpTo;
      for await (const event of this.stored(cursor, replayUpTo, subscription)) {
        yield event;
        cursor = event.seq;
      }
      cursor = Math.max(cursor, replayUpTo);
      while (!signal.aborted) {
        if (overflowed) throw new SubscriberTooSlowError(this.subscriberBuffer, cursor);
        if (withdrawnAfter !== null && cursor > withdrawnAfter) throw new ChangesWithdrawnError(withdrawnAfter);
        withdrawnAfter = null;
        const event = waiting.shift();
        if (!event) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        if (event.seq <= cursor) continue;
        if (event.seq > cursor + 1) {
          for await (const missed of this.stored(cursor, event.seq - 1, subscription)) yield missed;
        }
        cursor = event.seq;
        if (passes(event, subscription)) yield event;
      }
    } finally {
      this.emitter.off('change', onChange);
      this.emitter.off('withdrawn', onWithdrawn);
      signal.removeEventListener('abort', onAbort);
    }
  }

  private async *stored(afterSeq: number, upToSeq: number, filter: ChangeFilter): AsyncGenerator<ChangeEventRecord> {
    let cursor = afterSeq;
    while (cursor < upToSeq) {
      const page = await this.repository.changesBetween(cursor, upToSeq, filter, PAGE);
      yield* page;
      if (page.length < PAGE) return;
      cursor = page[page.length - 1]!.seq;
    }
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
      // A counter behind us means a snapshot was rolled back, or the store emptied or restored: follow it back.
      if (latest < this.latestSeq) {
        this.latestSeq = latest;
        this.emitter.emit('withdrawn', latest);
      }
      while (this.latestSeq < latest) {
        const page = await this.repository.changesBetween(this.latestSeq, latest, {}, PAGE);
        if (page.length === 0) return;
        for (const event of page) {
          this.latestSeq = event.seq;
          this.emitter.emit('change', event);
        }
      }
    } catch (error) {
      this.onPollError(error);
    }
  }
}
