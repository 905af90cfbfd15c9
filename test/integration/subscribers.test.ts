import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startServer, type RunningServer } from '../../src/api/server.js';
import { DEFAULT_SUBSCRIPTION_SETTINGS, SLOW_SUBSCRIBER_CLOSE_CODE } from '../../src/api/subscriptionServer.js';
import { createApiKey, Role } from '../../src/api/auth.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/logger.js';
import type { Runtime } from '../../src/app/runtime.js';
import { article, day, openTestRuntime, resetKnowledge } from '../support/runtime.js';

/**
 * More than the 10,000 live changes the feed used to hold for one subscriber before cutting it
 * off, as in issue 21's report (12,000 changes of one ingest).
 */
const BURST = 12_000;
/** A large ingest for a subscriber that keeps up: what it shows (order, each change once, a lookup each) needs no 12,000. */
const FAST_BURST = 4_000;

/** `count` articles, each `sentences` sentences long: one ARTICLE_ADDED event per article. */
function articles(count: number, sentences = 1, filler = ''): ReturnType<typeof article>[] {
  return Array.from({ length: count }, (_, i) =>
    article(`art${String(i).padStart(5, '0')}`, Array.from({ length: sentences }, (_, j) => `Sentence ${j} of article ${i} ${filler}.`).join(' ')),
  );
}

describe('subscribers: slow readers and server restarts', () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await openTestRuntime({ changeFeed: true });
  });
  after(async () => {
    await runtime.close();
  });
  beforeEach(async () => {
    await resetKnowledge(runtime);
  });

  it(
    'are never cut off for falling behind an ingest: one that stops reading gets every change when it reads again, in order, exactly once',
    { timeout: 300_000 },
    async () => {
      const feed = runtime.services.changeFeed;
      const stalled = feed.subscribe({ afterSeq: 0 });
      const first = stalled.next(); // starts the subscription; nothing is read after it until the ingest is done
      await new Promise((resolve) => setTimeout(resolve, 100));
      await runtime.services.ingest.ingest(articles(BURST), { takenAt: day('2024-01-01'), source: 'test', batchSize: 500 });
      await new Promise((resolve) => setTimeout(resolve, 500)); // the feed's poll sees the last batch
      const seen: number[] = [(await first).value!.seq];
      while (seen.length < BURST) {
        const { value, done } = await stalled.next();
        if (done) break;
        seen.push(value.seq);
      }
      await stalled.return(undefined);
      assert.deepEqual(
        seen,
        Array.from({ length: BURST }, (_, i) => i + 1),
      );
    },
  );

  it('feed a WebSocket subscriber reading as fast as it can every change of a large ingest, in order, exactly once', { timeout: 300_000 }, async () => {
    const server: RunningServer = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('silent') });
    const { token } = await createApiKey(runtime.services.db, 'fast subscriber', Role.READER);
    const client = createClient({
      url: server.url.replace('http', 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${token}` },
      retryAttempts: 0,
    });
    const seen: number[] = [];
    const received = new Promise<void>((resolve, reject) => {
      client.subscribe<{ changes: { seq: number; article: { text: string } } }>(
        // The article of every change: each one costs the server a lookup, as real subscribers' do.
        { query: 'subscription { changes(afterSeq: 0) { seq articleId article { text } } }' },
        {
          next: (message) => (seen.push(message.data!.changes.seq), seen.length === FAST_BURST && resolve()),
          error: reject,
          complete: () => reject(new Error(`completed after ${seen.length}`)),
        },
      );
    });
    const ingesting = new Promise((resolve) => setTimeout(resolve, 300)).then(() =>
      runtime.services.ingest.ingest(articles(FAST_BURST), { takenAt: day('2024-01-01'), source: 'test', batchSize: 500 }),
    );
    try {
      await Promise.all([received, ingesting]);
    } finally {
      await ingesting.catch(() => {}); // a failed subscriber leaves no ingest running into the next test
      await client.dispose();
      await server.close();
    }
    assert.deepEqual(
      seen,
      Array.from({ length: FAST_BURST }, (_, i) => i + 1),
    );
  });

  it('end at once when closed while waiting for a change that passes their filter, releasing their listener', async () => {
    const feed = runtime.services.changeFeed;
    const listeners = () => (feed as unknown as { emitter: EventEmitter }).emitter.listenerCount('advance');
    const before = listeners();
    const waiting = feed.subscribe({ afterSeq: null, articleIds: ['nobody'] });
    const pending = waiting.next();
    await runtime.services.ingest.ingest(articles(3), { takenAt: day('2024-01-01'), source: 'test' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(listeners(), before + 1);
    const closed = await Promise.race([
      waiting.return(undefined).then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2_000)),
    ]);
    assert.equal(closed, 'closed');
    assert.deepEqual(await pending, { value: undefined, done: true });
    assert.equal(listeners(), before);
  });

  it('lose their WebSocket with a close reason saying how to resume once they stop reading, and the server keeps serving', async () => {
    const server: RunningServer = await startServer(runtime, {
      ...loadConfig(),
      port: 0,
      host: '127.0.0.1',
      log: createLogger('silent'),
      subscriptions: { ...DEFAULT_SUBSCRIPTION_SETTINGS, slowSubscriberMs: 2_000 },
    });
    try {
      const { token } = await createApiKey(runtime.services.db, 'slow subscriber', Role.READER);
      const socket = new WebSocket(server.url.replace('http', 'ws'), 'graphql-transport-ws');
      const closed = new Promise<{ code: number; reason: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the slow subscriber was never cut off')), 60_000);
        socket.on('close', (code, reason) => (clearTimeout(timer), resolve({ code, reason: String(reason) })));
      });
      await new Promise((resolve) => socket.once('open', resolve));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } }));
      await new Promise((resolve) => socket.once('message', resolve));
      socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { changes { seq articleId article { text } } }' } }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Stop reading: about 24 MB of article texts overflow the loopback's kernel buffers (they grew to take
      // all of 8 MB in one run), so the server's sends stall.
      (socket as unknown as { _socket: { pause(): void } })._socket.pause();
      await runtime.services.ingest.ingest(articles(2_000, 2, 'x'.repeat(6000)), { takenAt: day('2024-02-01'), source: 'test', batchSize: 250 });
      (socket as unknown as { _socket: { resume(): void } })._socket.resume();
      const { code, reason } = await closed;
      assert.equal(code, SLOW_SUBSCRIBER_CLOSE_CODE);
      assert.equal(reason, 'too slow: nothing read for 2 s; resubscribe with afterSeq: the last seq received');
      const health = await fetch(server.url.replace('/graphql', '/health'));
      assert.equal(health.status, 200);
    } finally {
      await server.close();
    }
  });

  it('resume across a server restart with afterSeq and receive every change exactly once', { timeout: 120_000 }, async () => {
    const { token } = await createApiKey(runtime.services.db, 'restart subscriber', Role.READER);
    const seen: number[] = [];
    /**
     * Subscribes after `afterSeq` until `until` changes have been seen in all, then disconnects;
     * returns once `during` has finished too (its last changes can arrive before its ingest releases the lease).
     */
    const follow = async (url: string, afterSeq: number, until: number, during?: () => Promise<unknown>): Promise<void> => {
      const client = createClient({
        url: url.replace('http', 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: { Authorization: `Bearer ${token}` },
        retryAttempts: 0,
      });
      let running: Promise<unknown> | undefined;
      await new Promise<void>((resolve, reject) => {
        client.subscribe<{ changes: { seq: number } }>(
          { query: 'subscription($after: Int) { changes(afterSeq: $after) { seq } }', variables: { after: afterSeq } },
          { next: (message) => (seen.push(message.data!.changes.seq), seen.length >= until && resolve()), error: reject, complete: () => {} },
        );
        running = during?.();
        running?.catch(reject);
      });
      await client.dispose();
      await running;
    };
    const ingest = (n: number, date: string) =>
      runtime.services.ingest.ingest(
        articles(n).map((a) => ({ ...a, id: `${a.id}-${date}` })),
        { takenAt: day(date), source: 'test' },
      );
    const first = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('silent') });
    await follow(first.url, 0, 100, () => ingest(100, '2024-01-01'));
    await first.close();
    await ingest(100, '2024-02-01'); // while no server runs
    const restarted = await openTestRuntime({ changeFeed: true });
    const second = await startServer(restarted, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('silent') });
    try {
      await follow(second.url, seen.at(-1)!, 300, async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        await ingest(100, '2024-03-01');
      });
    } finally {
      await second.close();
      await restarted.close();
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 300 }, (_, i) => i + 1),
    );
  });
});
