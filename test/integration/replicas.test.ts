import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startServerProcess, stopServerProcess } from '../../bench/load.js';
import { createApiKey, Role } from '../../src/api/auth.js';
import { ApiKeyRepository } from '../../src/graph/apiKeyRepository.js';
import type { Runtime } from '../../src/app/runtime.js';
import { article, openTestRuntime, postGraphql, resetKnowledge, runChronoql, testDataDir } from '../support/runtime.js';

type Replica = { child: ChildProcess; url: string };

const INGEST = `mutation($at: DateTime!, $articles: [ArticleInput!]!) { ingestSnapshot(takenAt: $at, articles: $articles) { id status } }`;

/** Follows `changes` on one server from `afterSeq`, collecting seqs until `until` says stop or the socket dies. */
function follow(url: string, token: string, afterSeq: number, seen: number[]): { client: Client; ended: Promise<string> } {
  const client = createClient({
    url: url.replace('http', 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  const ended = new Promise<string>((resolve) => {
    client.subscribe(
      { query: 'subscription($after: Int) { changes(afterSeq: $after) { seq } }', variables: { after: afterSeq } },
      {
        next: (message) => void seen.push((message.data as { changes: { seq: number } }).changes.seq),
        error: (error) => resolve(`error: ${String((error as Error).message ?? error)}`),
        complete: () => resolve('complete'),
      },
    );
  });
  return { client, ended };
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const range = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, i) => first + i);
const articles = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => article(`${prefix}-${i}`, `Article ${i} of ${prefix} is about replicas.`));
/** The same articles as GraphQL input (no infobox). */
const inputs = (items: ReturnType<typeof articles>) => items.map(({ id, title, text }) => ({ id, title, text }));

describe('several servers on one Neo4j', () => {
  let runtime: Runtime;
  let reader: string;
  let writer: string;
  let scratch: string;
  const replicas: Replica[] = [];

  /** `chronoql serve` in its own process on the test Neo4j, with its own data directory (indexes) and the shared models. */
  async function replica(env: Record<string, string> = {}): Promise<Replica> {
    const dataDir = await mkdtemp(join(scratch, 'replica-'));
    const started = await startServerProcess({
      CHRONOQL_DATA_DIR: dataDir,
      CHRONOQL_MODELS_DIR: join(testDataDir, 'models'),
      PORT: '0',
      LOG_LEVEL: 'warn',
      ...env,
    });
    replicas.push(started);
    return started;
  }

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'chronoql-replicas-'));
    runtime = await openTestRuntime();
    await resetKnowledge(runtime);
    reader = (await createApiKey(runtime.services.db, 'reader', Role.READER)).token;
    writer = (await createApiKey(runtime.services.db, 'writer', Role.WRITER)).token;
  });
  after(async () => {
    for (const running of replicas) if (running.child.exitCode === null && running.child.signalCode === null) await stopServerProcess(running);
    await runtime.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it('delivers to a subscriber on A, exactly once and in order, the changes of an ingest through B and of a CLI ingest; B finds what was embedded after A ingested', async () => {
    const [a, b] = [await replica(), await replica()];
    const start = await runtime.services.reads.latestChangeSeq();
    const seen: number[] = [];
    const subscription = follow(a.url, reader, start, seen);
    const throughB = await postGraphql(b.url, INGEST, { token: writer, variables: { at: '2024-01-01', articles: inputs(articles('via-b', 40)) } });
    assert.deepEqual(throughB.body, { data: { ingestSnapshot: { id: '2024-01-01', status: 'INGESTING' } } });
    const file = join(scratch, 'cli.jsonl');
    await writeFile(
      file,
      articles('via-cli', 30)
        .map((item) => JSON.stringify(item))
        .join('\n') + '\n',
    );
    const cli = await runChronoql(['ingest', file, '--taken-at', '2024-02-01'], {}).finished;
    assert.equal(cli.code, 0, cli.output);
    const end = await runtime.services.reads.latestChangeSeq();
    assert.equal(end - start, 70, 'one ARTICLE_ADDED event per article');
    await until('A to deliver every change', () => seen.length >= end - start);
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more, no repeats
    assert.deepEqual(seen, range(start + 1, end));
    await subscription.client.dispose();

    const throughA = await postGraphql(a.url, INGEST, {
      token: writer,
      variables: { at: '2024-03-01', articles: inputs([article('Lighthouse', 'The zebrafinch lighthouse keeper counts quantum gulls at dawn.')]) },
    });
    assert.deepEqual(throughA.body, { data: { ingestSnapshot: { id: '2024-03-01', status: 'INGESTING' } } });
    const search = '{ search(query: "zebrafinch lighthouse keeper quantum gulls", mode: DENSE, k: 3) { articleId } }';
    await until('B to find the new article by its vector', async () => {
      const hits = (await postGraphql(b.url, search)).body.data?.search as Array<{ articleId: string }> | undefined;
      return hits?.[0]?.articleId === 'Lighthouse';
    });

    const revoked = await createApiKey(runtime.services.db, 'soon revoked', Role.READER);
    for (const server of [a, b]) assert.equal((await postGraphql(server.url, '{ snapshots { id } }', { token: revoked.token })).status, 200);
    await new ApiKeyRepository(runtime.services.db).revoke(revoked.key.id);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    for (const server of [a, b]) {
      const refused = await postGraphql(server.url, '{ snapshots { id } }', { token: revoked.token });
      assert.equal(refused.body.errors?.[0]?.extensions.code, 'UNAUTHENTICATED', 'a revoked key stops working on every server within a second');
    }
  });

  it('loses nothing for a subscriber on A that resumes on B with afterSeq when A is killed mid-stream', async () => {
    const [a, b] = [await replica(), await replica()];
    const start = await runtime.services.reads.latestChangeSeq();
    const seenOnA: number[] = [];
    const onA = follow(a.url, reader, start, seenOnA);
    const ingest = runtime.services.ingest.ingest(articles('burst', 500), {
      takenAt: new Date('2024-04-01T00:00:00Z'),
      source: 'replicas test',
      batchSize: 100,
    });
    await until('A to deliver some changes', () => seenOnA.length >= 50);
    a.child.kill('SIGKILL');
    assert.match(await onA.ended, /error|complete/);
    await ingest;
    const end = await runtime.services.reads.latestChangeSeq();
    const resumeAfter = seenOnA.at(-1)!;
    const seenOnB: number[] = [];
    const onB = follow(b.url, reader, resumeAfter, seenOnB);
    await until('B to deliver the rest', () => seenOnB.length >= end - resumeAfter);
    await onB.client.dispose();
    assert.ok(seenOnA.length < end - start, `A was killed mid-stream (${seenOnA.length} of ${end - start})`);
    assert.deepEqual([...seenOnA, ...seenOnB], range(start + 1, end));
  });

  it('holds one rate budget across servers: a caller’s operations on A and B count together', async () => {
    const env = { CHRONOQL_RATE_LIMIT: '10' };
    const [a, b] = [await replica(env), await replica(env)];
    // A caller of its own: the subscriptions of the tests before may share this minute.
    const caller = (await createApiKey(runtime.services.db, 'rate budget', Role.READER)).token;
    const read = (url: string) => postGraphql(url, '{ snapshots { id } }', { token: caller });
    // Budgets count per clock minute: start well inside one.
    if (new Date().getUTCSeconds() > 40) await new Promise((resolve) => setTimeout(resolve, (61 - new Date().getUTCSeconds()) * 1000));
    const codes: Array<string | undefined> = [];
    for (let i = 0; i < 6; i += 1) codes.push((await read(a.url)).body.errors?.[0]?.extensions.code);
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // A shares its counts (every second)
    for (let i = 0; i < 6; i += 1) codes.push((await read(b.url)).body.errors?.[0]?.extensions.code);
    assert.deepEqual(codes.slice(0, 10), Array(10).fill(undefined));
    assert.deepEqual(codes.slice(10), ['RATE_LIMITED', 'RATE_LIMITED'], 'B counts what A served');
  });
});
