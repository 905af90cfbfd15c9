import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { Database } from '../../src/graph/database.js';
import { IngestService } from '../../src/ingest/ingestService.js';
import { loadConfig } from '../../src/app/config.js';
import { startServer, type RunningServer } from '../../src/api/server.js';
import { createApiKey, Role } from '../../src/api/auth.js';
import { createLogger } from '../../src/platform/logger.js';
import type { Runtime } from '../../src/app/runtime.js';
import { article, day, ingestOutcome, openTestRuntime, postGraphql, resetKnowledge } from '../support/runtime.js';

type Event = { seq: number; kind: string; articleId: string; fact: { value: string } | null };

const SUBSCRIPTION = `subscription($afterSeq: Int, $kinds: [ChangeKind!]) {
  changes(afterSeq: $afterSeq, kinds: $kinds) { seq kind articleId fact { value } }
}`;

/** Collects subscription events until `done` says so (or the timeout passes). */
function collect(client: Client, variables: Record<string, unknown>, done: (events: Event[]) => boolean, timeoutMs = 20_000) {
  const events: Event[] = [];
  let unsubscribe = (): void => {};
  const finished = new Promise<Event[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out with ${events.length} events: ${JSON.stringify(events)}`)), timeoutMs);
    unsubscribe = client.subscribe<{ changes: Event }>(
      { query: SUBSCRIPTION, variables },
      {
        next: (message) => {
          if (message.errors) reject(new Error(JSON.stringify(message.errors)));
          events.push(message.data!.changes);
          if (done(events)) {
            clearTimeout(timer);
            resolve(events);
          }
        },
        error: reject,
        complete: () => {},
      },
    );
  });
  return { events: finished.finally(() => unsubscribe()), received: events };
}

describe('GraphQL server', () => {
  let runtime: Runtime;
  let server: RunningServer;
  let client: Client;
  let token: string;

  before(async () => {
    runtime = await openTestRuntime({ changeFeed: true });
    server = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('warn') });
    ({ token } = await createApiKey(runtime.services.db, 'server test', Role.WRITER));
    client = createClient({
      url: server.url.replace('http', 'ws'),
      webSocketImpl: WebSocket,
      lazy: true,
      connectionParams: { Authorization: `Bearer ${token}` },
    });
  });
  after(async () => {
    await client.dispose();
    await server.close();
    await runtime.close();
  });
  beforeEach(async () => {
    await resetKnowledge(runtime);
  });

  async function post(query: string, variables?: Record<string, unknown>): Promise<any> {
    return (await postGraphql(server.url, query, { token, variables })).body;
  }

  it('refuses an oversized body, broken JSON and a deep subscription, in JSON and without stack traces', async () => {
    const huge = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ snapshots { id } }', variables: { pad: 'x'.repeat(2_000_000) } }),
    });
    assert.equal(huge.status, 413);
    assert.equal((await huge.json()).errors[0].extensions.code, 'PAYLOAD_TOO_LARGE');
    const broken = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });
    assert.equal(broken.status, 400);
    assert.equal((await broken.json()).errors[0].extensions.code, 'BAD_REQUEST');
    const failing = await post(`{ ask(question: "") { text } }`);
    assert.equal(failing.errors[0].extensions.code, 'BAD_USER_INPUT');
    assert.equal(failing.errors[0].extensions.stacktrace, undefined);
    let deepSubscription = 'value';
    for (let level = 0; level < 10; level++) deepSubscription = `article { facts { ${deepSubscription} } }`;
    const refused = await new Promise<unknown>((resolve) => {
      client.subscribe(
        { query: `subscription { changes { fact { ${deepSubscription} } } }` },
        { next: () => resolve('accepted'), error: resolve, complete: () => resolve('completed') },
      );
    });
    assert.ok(Array.isArray(refused) && /depth|cost/i.test(JSON.stringify(refused)), `subscription refused: ${JSON.stringify(refused).slice(0, 200)}`);
    const normal = await post(`{ articles(first: 5) { edges { node { id facts { attribute value previous { value } } sentences { text label } } } } }`);
    assert.equal(normal.errors, undefined, 'an ordinary query stays within the limits');
  });

  it('replays stored changes, then streams live ones from another connection, with no gap or duplicate', async () => {
    const ingest = runtime.services.ingest;
    await ingest.ingest([article('A', 'One. Two.', { Leader: 'X' }), article('B', 'Three.')], { takenAt: day('2024-01-01'), source: 'test' });
    const subscription = collect(client, { afterSeq: 0 }, (events) => events.length >= 6);
    // Wait for the replay so the next ingest happens mid-subscription.
    while (subscription.received.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));

    // A second driver and service: the same path `chronoql ingest` takes in another process.
    const other = Database.connect(process.env.NEO4J_URI ?? runtime.neo4j.uri, process.env.NEO4J_USER ?? '', process.env.NEO4J_PASSWORD ?? '');
    try {
      await new IngestService(other).ingest([article('A', 'One. Two changed. Four.', { Leader: 'Y' }), article('B', 'Three.', { Size: '1' })], {
        takenAt: day('2024-02-01'),
        source: 'test',
        batchSize: 1,
      });
    } finally {
      await other.close();
    }
    const events = await subscription.events;
    assert.deepEqual(
      events.map((e) => e.seq),
      [1, 2, 3, 4, 5, 6],
    );
    assert.deepEqual(
      events.map((e) => [e.kind, e.articleId]),
      [
        ['ARTICLE_ADDED', 'A'],
        ['ARTICLE_ADDED', 'B'],
        ['SENTENCE_CHANGED', 'A'],
        ['SENTENCE_NEW', 'A'],
        ['FACT_UPDATED', 'A'],
        ['FACT_NEW', 'B'],
      ],
    );
    assert.equal(events[4]!.fact?.value, 'Y');

    // Resuming after seq 4 with a kind filter yields only what came later and matches.
    const resumed = await collect(client, { afterSeq: 4, kinds: ['FACT_NEW'] }, (received) => received.length >= 1).events;
    assert.deepEqual(
      resumed.map((e) => e.seq),
      [6],
    );
  });

  it('delivers changes of a snapshot ingested through the mutation to a live-only subscriber', async () => {
    const subscription = collect(client, {}, (events) => events.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await post(`mutation($articles: [ArticleInput!]!) { ingestSnapshot(takenAt: "2024-03-01", articles: $articles) { id status } }`, {
      articles: [{ id: 'C', text: 'Hello world.', infobox: [{ attribute: 'Leader', value: 'Z' }] }],
    });
    assert.deepEqual(result.data.ingestSnapshot, { id: '2024-03-01', status: 'INGESTING' });
    const events = await subscription.events;
    assert.deepEqual(
      events.map((e) => [e.seq, e.kind, e.articleId]),
      [[1, 'ARTICLE_ADDED', 'C']],
    );
    assert.deepEqual(await ingestOutcome(post, '2024-03-01', { searchable: true }), {
      id: '2024-03-01',
      status: 'COMPLETE',
      searchable: true,
      changeCount: 1,
      failure: null,
    });
  });

  it('refuses an afterSeq past every change ever recorded with BAD_USER_INPUT, in a query and a subscription (it was CHANGES_WITHDRAWN)', async () => {
    await runtime.services.ingest.ingest([article('A', 'One.')], { takenAt: day('2024-01-01'), source: 'test' });
    const query = await post('{ changes(afterSeq: 2147483647) { totalCount } }');
    assert.equal(query.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', JSON.stringify(query));
    assert.match(query.errors[0].message, /afterSeq 2147483647 is past the last change ever recorded \(seq 1\)/);
    const subscribed = await new Promise<unknown>((resolve) => {
      client.subscribe(
        { query: 'subscription { changes(afterSeq: 2147483647) { seq } }' },
        { next: resolve, error: resolve, complete: () => resolve('complete') },
      );
    });
    assert.equal(
      (subscribed as { errors?: Array<{ extensions?: { code?: string } }> }).errors?.[0]?.extensions?.code,
      'BAD_USER_INPUT',
      JSON.stringify(subscribed),
    );
    assert.deepEqual((await post('{ changes(afterSeq: 1) { totalCount edges { node { seq } } } }')).data.changes, { totalCount: 1, edges: [] });
  });

  it('answers bad input with a clear error and an extensions.code', async () => {
    const invalid = await post(
      `mutation { ingestSnapshot(takenAt: "2024-03-01", articles: [{id: " ", text: "x"}, {id: "D", text: "y", infobox: [{attribute: "A", value: "1"}, {attribute: "a", value: "2"}]}]) { id } }`,
    );
    assert.equal(invalid.errors[0].extensions.code, 'INVALID_SNAPSHOT');
    assert.deepEqual(
      invalid.errors[0].extensions.problems.map((p: any) => [p.source, p.line]),
      [
        ['articles', 1],
        ['articles', 2],
      ],
    );
    await post(`mutation { ingestSnapshot(takenAt: "2024-05-01", articles: [{id: "E", text: "x"}]) { id } }`);
    const older = await post(`mutation { ingestSnapshot(takenAt: "2024-04-01", articles: [{id: "E", text: "x"}]) { id } }`);
    assert.equal(older.errors[0].extensions.code, 'SNAPSHOT_OUT_OF_ORDER');
    assert.match(older.errors[0].message, /older than the latest stored snapshot 2024-05-01/);
    assert.equal((await ingestOutcome(post, '2024-05-01')).status, 'COMPLETE');
    const badDate = await post(`query($asOf: DateTime) { fact(subject: "E", attribute: "x", asOf: $asOf) { value } }`, {
      asOf: '2024-13-45',
    });
    assert.equal(badDate.errors[0].extensions.code, 'BAD_USER_INPUT');
    assert.match(badDate.errors[0].message, /"2024-13-45" is not a date/);
    const badCursor = await post(`{ articles(after: "bm90LWEtY3Vyc29y") { totalCount } }`);
    assert.equal(badCursor.errors[0].extensions.code, 'BAD_USER_INPUT');
  });

  it('serves health, metrics and an explorer that needs no internet', async () => {
    const health = await fetch(server.url.replace('/graphql', '/health'));
    const body = (await health.json()) as {
      status: string;
      neo4j: string;
      retrieval: { embedder: string; problem: string | null; indexedRows: Record<string, number> };
    };
    assert.equal(body.status, 'ok');
    assert.equal(body.neo4j, 'reachable');
    assert.equal(body.retrieval.embedder, runtime.services.retrieval.embedderId);
    assert.equal(body.retrieval.problem, null);
    assert.deepEqual(Object.keys(body.retrieval.indexedRows).sort(), ['PASSAGE', 'SENTENCE']);
    const page = await fetch(server.url, { headers: { accept: 'text/html' } });
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.match(html, /<title>ChronoQL explorer<\/title>/);
    assert.doesNotMatch(html, /<script[^>]+src=["']https?:/, 'no script may load from the internet');
    assert.doesNotMatch(html, /<link[^>]+href=["']https?:/, 'no stylesheet may load from the internet');
    const ready = await fetch(server.url.replace('/graphql', '/ready'));
    assert.deepEqual([ready.status, await ready.json()], [200, { ready: true }]);
    await post('{ snapshots { id } }');
    await post('{ search(query: "anything", mode: DENSE) { id } }');
    const metrics = await (await fetch(server.url.replace('/graphql', '/metrics'))).text();
    assert.match(metrics, /chronoql_graphql_requests_total\{operation="query",field="snapshots",outcome="ok"\} \d+/);
    assert.match(metrics, /chronoql_graphql_request_duration_seconds_count\{operation="query",field="search"\} [1-9]/);
    assert.match(metrics, /chronoql_native_call_duration_seconds_count\{call="search"\} [1-9]/);
    assert.match(metrics, /chronoql_neo4j_round_trips_total [1-9]\d*/);
    assert.match(metrics, /chronoql_ingest_articles\{state="total"\} 0/);
    assert.match(metrics, /chronoql_subscriptions_active \d+/);
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'trace-42' },
      body: '{"query":"{ snapshots { id } }"}',
    });
    assert.equal(response.headers.get('x-request-id'), 'trace-42');
    // An unknown route answers in JSON with a code, as every other error does (it was an HTML page).
    const unknown = await fetch(server.url.replace('/graphql', '/no-such-route'));
    assert.equal(unknown.status, 404);
    assert.match(unknown.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(((await unknown.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code, 'NOT_FOUND');
  });
});
