/**
 * Load, subscriber burst and soak against a running ChronoQL server (issue 11): mixed traffic
 * (70 % fact and as-of reads, 20 % ask, 10 % history) from autocannon, a burst of change events
 * to many subscribers, and the server's memory over a soak. The bench command runs the server
 * as its own process; the test suite runs a short version in-process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import type { ArticleInput } from '../src/ingest/snapshotReader.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { projectRoot } from '../src/platform/paths.js';
import { createApiKey, Role } from '../src/api/auth.js';
import type { Runtime } from '../src/app/runtime.js';
import { machine, openBenchRuntime, writeResult } from './common.js';

export interface TrafficResult {
  connections: number;
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Transport errors, timeouts, non-2xx answers and GraphQL errors in 200 answers. */
  errors: number;
}

export interface BurstResult {
  subscribers: number;
  events: number;
  /** Per subscriber: events received, and whether they were exactly seqs first..last in order. */
  received: { min: number; max: number };
  exactlyOnceInOrder: number;
  deliveredWithinMs: number;
}

/** The demo corpus's queries in the proportions of the mix: 7 reads, 2 asks, 1 history in every 10. */
export async function mixedRequests(): Promise<Array<{ query: string; variables: Record<string, unknown> }>> {
  const snapshots = await demoSnapshots();
  const dates = snapshots.map((snapshot) => snapshot.takenAt.toISOString().slice(0, 10));
  const pairs: Array<{ subject: string; attribute: string }> = [];
  for (const snapshot of snapshots) {
    for (const article of await readSnapshotFile(snapshot.file)) {
      for (const attribute of Object.keys(article.infobox)) pairs.push({ subject: article.id, attribute });
    }
  }
  const requests: Array<{ query: string; variables: Record<string, unknown> }> = [];
  for (let i = 0; i < 100; i++) {
    const { subject, attribute } = pairs[(i * 7919) % pairs.length]!;
    const asOf = dates[i % dates.length];
    const slot = i % 10;
    if (slot < 5)
      requests.push({
        query: 'query($s: ID!, $a: String!, $t: DateTime) { fact(subject: $s, attribute: $a, asOf: $t) { value validFrom validTo } }',
        variables: { s: subject, a: attribute, t: asOf },
      });
    else if (slot < 7)
      requests.push({
        query: 'query($s: ID!, $t: DateTime) { article(id: $s) { title facts(asOf: $t) { attribute value } } }',
        variables: { s: subject, t: asOf },
      });
    else if (slot < 9)
      requests.push({
        query: 'query($q: String!, $t: DateTime) { ask(question: $q, asOf: $t) { text adopted certainty { reliable } } }',
        variables: { q: `What is the ${attribute} of ${subject}?`, t: asOf },
      });
    else
      requests.push({
        query: 'query($s: ID!, $a: String!) { factHistory(subject: $s, attribute: $a) { value validFrom validTo } }',
        variables: { s: subject, a: attribute },
      });
  }
  return requests;
}

/** Sends one request of each kind of the mix, one at a time: the first question loads the models (seconds, once). */
export async function warmUp(url: string): Promise<void> {
  for (const request of (await mixedRequests()).slice(0, 10)) {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
    await response.text();
  }
}

/** Runs the mix at `connections` for `seconds`, counting GraphQL errors inside 200 answers too. */
export async function runTraffic(url: string, connections: number, seconds: number): Promise<TrafficResult> {
  let graphqlErrors = 0;
  const requests = (await mixedRequests()).map(({ query, variables }) => ({
    method: 'POST' as const,
    path: new URL(url).pathname,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
    onResponse: (status: number, body: string) => {
      if (status === 200 && body.includes('"errors"')) graphqlErrors += 1;
    },
  }));
  const result = await autocannon({ url, connections, duration: seconds, requests, timeout: 10 });
  return {
    connections,
    seconds,
    requests: result.requests.total,
    requestsPerSecond: Number(result.requests.average.toFixed(1)),
    p50Ms: result.latency.p50,
    p90Ms: result.latency.p90,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    errors: result.errors + result.timeouts + result.non2xx + graphqlErrors,
  };
}

/** `count` new articles: one ARTICLE_ADDED event each. */
export function burstArticles(count: number, prefix: string): ArticleInput[] {
  return Array.from({ length: count }, (_, i) => ({ id: `${prefix}-${i}`, title: `${prefix} ${i}`, text: `Item ${i} of the burst.`, infobox: {} }));
}

/**
 * `subscribers` live subscribers, then `ingest` (which must write `events` change events after
 * the current last seq): how many each received, and whether exactly once and in order.
 */
export async function runSubscriberBurst(options: {
  url: string;
  token: string;
  subscribers: number;
  events: number;
  afterSeq: number;
  ingest: () => Promise<unknown>;
}): Promise<BurstResult> {
  const wsUrl = options.url.replace(/^http/, 'ws');
  // The credential goes with the upgrade too: the server admits only a few sockets per address that have yet to show one.
  const authorization = `Bearer ${options.token}`;
  const withCredential = class extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers: { authorization } });
    }
  };
  const clients: Client[] = [];
  const received: number[][] = [];
  let done = 0;
  let allDone: () => void = () => {};
  const finished = new Promise<void>((resolve) => (allDone = resolve));
  const ready: Promise<void>[] = [];
  for (let s = 0; s < options.subscribers; s++) {
    const client = createClient({
      url: wsUrl,
      webSocketImpl: withCredential,
      connectionParams: { Authorization: `Bearer ${options.token}` },
      retryAttempts: 0,
    });
    clients.push(client);
    const seqs: number[] = [];
    received.push(seqs);
    // Replaying from afterSeq, the first event proves the subscription is live before the burst.
    let markReady: () => void = () => {};
    ready.push(new Promise((resolve) => (markReady = resolve)));
    client.subscribe<{ changes: { seq: number } }>(
      { query: 'subscription($after: Int) { changes(afterSeq: $after) { seq kind articleId } }', variables: { after: options.afterSeq - 1 } },
      {
        next: (message) => {
          const seq = message.data!.changes.seq;
          if (seq === options.afterSeq) return markReady();
          seqs.push(seq);
          if (seqs.length === options.events && ++done === options.subscribers) allDone();
        },
        error: (error) => {
          throw new Error(`subscriber ${s} failed: ${JSON.stringify(error)}`);
        },
        complete: () => {},
      },
    );
  }
  await Promise.all(ready);
  const started = performance.now();
  await options.ingest();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([finished, new Promise<void>((resolve) => (timer = setTimeout(resolve, 300_000)))]);
  clearTimeout(timer);
  const deliveredWithinMs = Math.round(performance.now() - started);
  await Promise.all(clients.map((client) => client.dispose()));
  const expected = (seqs: number[]): boolean => seqs.length === options.events && seqs.every((seq, i) => seq === options.afterSeq + 1 + i);
  return {
    subscribers: options.subscribers,
    events: options.events,
    received: { min: Math.min(...received.map((r) => r.length)), max: Math.max(...received.map((r) => r.length)) },
    exactlyOnceInOrder: received.filter(expected).length,
    deliveredWithinMs,
  };
}

async function serverRssBytes(url: string): Promise<number> {
  const text = await (await fetch(url.replace(/\/graphql$/, '/metrics'))).text();
  return Number(/^process_resident_memory_bytes (\d+)/m.exec(text)![1]);
}

/**
 * The load generator is one client address standing for many users: lift the per-caller rate,
 * cost and session shares so that they measure the server, not one caller's budget.
 */
export const ONE_CLIENT_STANDS_FOR_MANY = { CHRONOQL_RATE_LIMIT: '10000000', CHRONOQL_COST_BUDGET: '1000000000', CHRONOQL_CALLER_SESSIONS: '50' };

/** `chronoql serve` in its own process, resolved once it says where it serves. */
export function startServerProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(projectRoot(), 'bin', 'chronoql.js'), 'serve'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving at (\S+)/.exec(output);
      if (match) resolve({ child, url: match[1]! });
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before serving: ${output}`)));
  });
}

/** The full benchmark (README, "Benchmarks"): the server in its own process, on the bench store. */
export async function runLoadBenchmark(options: {
  seconds: number;
  soakSeconds: number;
  subscribers: number;
  events: number;
  connections?: number;
}): Promise<Record<string, unknown>> {
  const runtime: Runtime = await openBenchRuntime();
  let server: { child: ChildProcess; url: string } | undefined;
  try {
    for (const snapshot of await demoSnapshots()) {
      await runtime.services.ingest.ingest(await readSnapshotFile(snapshot.file), { takenAt: snapshot.takenAt, source: snapshot.source });
    }
    await runtime.services.retrieval.catchUp();
    const { token } = await createApiKey(runtime.services.db, 'load benchmark', Role.READER);
    server = await startServerProcess({
      CHRONOQL_DATA_DIR: join(projectRoot(), '.chronoql-bench'),
      NEO4J_URI: '',
      PORT: '0',
      ...ONE_CLIENT_STANDS_FOR_MANY,
      LOG_LEVEL: 'warn',
    });
    const url = server.url;
    await warmUp(url);
    await runTraffic(url, 4, 5); // warm-up: JIT, caches, connection pools

    // The highest concurrency whose p99 stays under 200 ms, with no errors.
    const sweep: TrafficResult[] = [];
    if (options.connections === undefined) {
      for (const connections of [1, 2, 4, 8, 16, 32, 64]) {
        const run = await runTraffic(url, connections, 10);
        sweep.push(run);
        if (run.p99Ms >= 200 || run.errors > 0) break;
      }
    }
    const chosen = options.connections ?? [...sweep].reverse().find((run) => run.p99Ms < 200 && run.errors === 0)?.connections ?? 1;
    const main = await runTraffic(url, chosen, options.seconds);

    // Soak: the same mix, with the server's RSS sampled every 5 s.
    const rss: Array<{ atSeconds: number; megabytes: number }> = [];
    const soakStarted = performance.now();
    const sampler = setInterval(() => {
      void serverRssBytes(url).then((bytes) =>
        rss.push({ atSeconds: Math.round((performance.now() - soakStarted) / 1000), megabytes: Math.round(bytes / 2 ** 20) }),
      );
    }, 5_000);
    const soak = await runTraffic(url, chosen, options.soakSeconds);
    clearInterval(sampler);
    // RSS saws up and down with garbage collection: compare the median of each half, not two single samples.
    const half = options.soakSeconds / 2;
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const firstHalf = median(rss.filter((sample) => sample.atSeconds <= half).map((sample) => sample.megabytes));
    const secondHalf = median(rss.filter((sample) => sample.atSeconds > half).map((sample) => sample.megabytes));
    const growth = (secondHalf - firstHalf) / firstHalf;

    const afterSeq = (await runtime.services.reads.latestChangeSeq()) + 1;
    // The first replayed event (afterSeq itself) is written first, so subscribers can prove they are live.
    await runtime.services.ingest.ingest(burstArticles(1, 'marker'), { takenAt: new Date(), source: 'bench' });
    const burst = await runSubscriberBurst({
      url,
      token,
      subscribers: options.subscribers,
      events: options.events,
      afterSeq,
      ingest: () =>
        runtime.services.ingest.ingest(burstArticles(options.events, 'burst'), { takenAt: new Date(Date.now() + 1000), source: 'bench', batchSize: 500 }),
    });

    const result = {
      benchmark: 'load',
      machine: machine(),
      mix: '70% fact and as-of reads (fact, article facts), 20% ask, 10% factHistory; demo corpus',
      sweep,
      chosenConnections: chosen,
      main,
      soak: { ...soak, rss, rssMedianFirstHalfMB: firstHalf, rssMedianSecondHalfMB: secondHalf, rssGrowthSecondHalf: Number(growth.toFixed(3)) },
      burst,
    };
    await writeResult('load', result);
    return result;
  } finally {
    if (server) await stopServerProcess(server);
    await runtime.close();
  }
}

export async function stopServerProcess(server: { child: ChildProcess }): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}
