import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { SubscriberTooSlowError } from '../../src/ingest/changeFeed.js';
import type { ChangeEventRecord } from '../../src/domain/model.js';
import { SLOW_SUBSCRIBER_CLOSE_CODE, startServer, type RunningServer } from '../../src/api/server.js';
import { createApiKey, Role } from '../../src/api/auth.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/logger.js';
import type { Runtime } from '../../src/app/runtime.js';
import { article, day, openTestRuntime, resetKnowledge } from '../support/runtime.js';

const BUFFER = 1_000;

/** `count` articles, each `sentences` sentences long: one ARTICLE_ADDED event per article. */
function articles(count: number, sentences = 1, filler = ''): ReturnType<typeof article>[] {
  return Array.from({ length: count }, (_, i) =>
    article(`art${String(i).padStart(5, '0')}`, Array.from({ length: sentences }, (_, j) => `Sentence ${j} of article ${i} ${filler}.`).join(' ')),
  );
}

describe('subscribers: slow readers and server restarts', () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await openTestRuntime({ changeFeed: true, env: { CHRONOQL_SUBSCRIBER_BUFFER: String(BUFFER) } });
  });
  after(async () => {
    await runtime.close();
  });
  beforeEach(async () => {
    await resetKnowledge(runtime);
  });

  it('are cut off once more than their buffer waits, and resume from the seq they were given without loss or repeat', async () => {
    const feed = runtime.services.changeFeed;
    const stalled = feed.subscribe({ afterSeq: null });
    const first = stalled.next(); // starts the subscription; nothing is read after it
    await new Promise((resolve) => setTimeout(resolve, 100));
    await runtime.services.ingest.ingest(articles(3 * BUFFER), { takenAt: day('2024-01-01'), source: 'test', batchSize: 250 });
    const seen: number[] = [(await first).value!.seq];
    let cutOff: SubscriberTooSlowError | undefined;
    try {
      for (;;) {
        const { value, done } = await stalled.next();
        if (done) break;
        seen.push(value.seq);
      }
    } catch (error) {
      cutOff = error as SubscriberTooSlowError;
    }
    assert.ok(cutOff instanceof SubscriberTooSlowError, `cut off: ${String(cutOff)}`);
    assert.equal(cutOff.extensions.code, 'SUBSCRIBER_TOO_SLOW');
    assert.ok(seen.length <= BUFFER + 1, `at most the buffer was delivered, got ${seen.length}`);
    assert.equal(cutOff.extensions.resumeAfterSeq, seen.at(-1));
    const rest: number[] = [];
    for await (const event of feed.subscribe({ afterSeq: cutOff.extensions.resumeAfterSeq }) as AsyncGenerator<ChangeEventRecord>) {
      rest.push(event.seq);
      if (event.seq === 3 * BUFFER) break;
    }
    assert.deepEqual([...seen, ...rest], Array.from({ length: 3 * BUFFER }, (_, i) => i + 1));
  });

  it('end at once when closed while waiting for a change that passes their filter, releasing their listener', async () => {
    const feed = runtime.services.changeFeed;
    const listeners = () => (feed as unknown as { emitter: EventEmitter }).emitter.listenerCount('change');
    const before = listeners();
    const waiting = feed.subscribe({ afterSeq: null, articleIds: ['nobody'] });
    const pending = waiting.next();
    await runtime.services.ingest.ingest(articles(3), { takenAt: day('2024-01-01'), source: 'test' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(listeners(), before + 1);
    const closed = await Promise.race([waiting.return(undefined).then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2_000))]);
    assert.equal(closed, 'closed');
    assert.deepEqual(await pending, { value: undefined, done: true });
    assert.equal(listeners(), before);
  });

  it('lose their WebSocket with a close reason saying where to resume, and the server keeps serving', async () => {
    const server: RunningServer = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('silent') });
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
      // Stop reading: the kernel buffers fill with ~6 MB of article texts, sends stall and changes pile up in the server.
      (socket as unknown as { _socket: { pause(): void } })._socket.pause();
      await runtime.services.ingest.ingest(articles(2 * BUFFER, 2, 'x'.repeat(2000)), { takenAt: day('2024-02-01'), source: 'test', batchSize: 250 });
      (socket as unknown as { _socket: { resume(): void } })._socket.resume();
      const { code, reason } = await closed;
      assert.equal(code, SLOW_SUBSCRIBER_CLOSE_CODE);
      assert.match(reason, /^too slow; resubscribe with afterSeq: \d+$/);
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
      const client = createClient({ url: url.replace('http', 'ws'), webSocketImpl: WebSocket, connectionParams: { Authorization: `Bearer ${token}` }, retryAttempts: 0 });
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
    const ingest = (n: number, date: string) => runtime.services.ingest.ingest(articles(n).map((a) => ({ ...a, id: `${a.id}-${date}` })), { takenAt: day(date), source: 'test' });
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
    assert.deepEqual(seen, Array.from({ length: 300 }, (_, i) => i + 1));
  });
});
