/**
 * How fast a subscriber catches up: one WebSocket subscriber resumes with afterSeq: 0 over a
 * store of `events` change events, reading as fast as it can, for a bare selection and for one
 * that resolves the article and sentence of every event (the explorer's example).
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createApiKey, Role } from '../src/api/auth.js';
import { startServer } from '../src/api/server.js';
import { loadConfig } from '../src/app/config.js';
import { createLogger } from '../src/platform/logger.js';
import { burstArticles } from './load.js';
import { machine, openBenchRuntime, writeResult } from './common.js';

const SELECTIONS = {
  bare: 'seq kind articleId',
  nested: 'seq kind articleId at article { title } sentence { text }',
} as const;

async function replay(url: string, token: string, selection: string, events: number): Promise<{ seconds: number; eventsPerSecond: number; inOrder: boolean }> {
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  const seqs: number[] = [];
  const started = performance.now();
  try {
    await new Promise<void>((resolve, reject) => {
      client.subscribe<{ changes: { seq: number } }>(
        { query: `subscription { changes(afterSeq: 0) { ${selection} } }` },
        {
          next: (message) => (seqs.push(message.data!.changes.seq), seqs.length === events && resolve()),
          error: reject,
          complete: () => reject(new Error('the subscription ended early')),
        },
      );
    });
  } finally {
    await client.dispose();
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds: Number(seconds.toFixed(2)), eventsPerSecond: Math.round(events / seconds), inOrder: seqs.every((seq, i) => seq === i + 1) };
}

export async function runReplayBenchmark(options: { events: number }): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime({ changeFeed: true });
  const server = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('warn') });
  try {
    // One ARTICLE_ADDED event per article.
    await runtime.services.ingest.ingest(burstArticles(options.events, 'replay'), {
      takenAt: new Date('2024-01-01T00:00:00Z'),
      source: 'bench',
      batchSize: 500,
    });
    const { token } = await createApiKey(runtime.services.db, 'replay bench', Role.READER);
    const result: Record<string, unknown> = { benchmark: 'replay', machine: machine(), events: options.events };
    for (const [name, selection] of Object.entries(SELECTIONS)) {
      // Round trips do not depend on how busy the machine is, so they compare across runs where timings may not.
      const queriesBefore = runtime.services.db.queryCount;
      const timing = await replay(server.url, token, selection, options.events);
      result[name] = { selection, ...timing, neo4jQueries: runtime.services.db.queryCount - queriesBefore };
    }
    await writeResult('replay', result);
    return result;
  } finally {
    await server.close();
    await runtime.close();
  }
}
