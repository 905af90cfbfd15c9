// Retrieval that holds (issue 8): one validity rule for Cypher, the native index and the
// re-check; date-time snapshots; Lucene given any text; and a server whose vector indexes
// follow a CLI ingest run in another process.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { indexEnd, indexInterval, indexStart, isValidAt, type ValidInterval } from '../../src/domain/time.js';
import { luceneQuery } from '../../src/graph/retrievalRepository.js';
import { queryTerms, SearchMode, SearchUnit } from '../../src/retrieval/retriever.js';
import { loadConfig } from '../../src/app/config.js';
import { startServer, type RunningServer } from '../../src/api/server.js';
import { createLogger } from '../../src/platform/logger.js';
import type { Runtime } from '../../src/app/runtime.js';
import { article, openTestRuntime, resetKnowledge, runChronoql, testDataDir } from '../support/runtime.js';

const ALL_MODES = [SearchMode.HYBRID, SearchMode.DENSE, SearchMode.LEXICAL, SearchMode.NEO4J_VECTOR];
const at = (iso: string): Date => new Date(iso);

describe('the validity rule', () => {
  it('is half-open: valid from validFrom, no longer at validTo', () => {
    const interval = { validFrom: at('2024-03-01T08:00:00Z'), validTo: at('2024-03-01T20:00:00Z') };
    assert.equal(isValidAt(interval, at('2024-03-01T07:59:59.999Z')), false);
    assert.equal(isValidAt(interval, at('2024-03-01T08:00:00Z')), true);
    assert.equal(isValidAt(interval, at('2024-03-01T19:59:59.999Z')), true);
    assert.equal(isValidAt(interval, at('2024-03-01T20:00:00Z')), false);
    assert.equal(isValidAt({ validFrom: interval.validFrom, validTo: null }, at('9999-12-31T00:00:00Z')), true);
  });

  it('converts to index time as a superset: the index never loses a valid version, and no interval is empty', () => {
    // A seeded sweep over instants that share minutes, days and centuries, and dates beyond the index's range.
    let seed = 42;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = (): Date => {
      const bases = [Date.UTC(2024, 2, 1, 8), Date.UTC(1850, 0, 1), Date.UTC(9999, 11, 31), Date.UTC(-3000, 0, 1)];
      return new Date(bases[Math.floor(random() * bases.length)]! + Math.floor((random() - 0.5) * 4 * 3_600_000));
    };
    for (let trial = 0; trial < 20_000; trial++) {
      const [a, b, asOf] = [pick(), pick(), pick()];
      if (a.getTime() === b.getTime()) continue;
      const interval: ValidInterval = a < b ? { validFrom: a, validTo: b } : { validFrom: b, validTo: random() < 0.3 ? null : a };
      const index = indexInterval(interval);
      assert.ok(index.validTo === null || index.validFrom < index.validTo, `non-empty: ${JSON.stringify(interval)}`);
      const inIndex = index.validFrom <= indexStart(asOf) && (index.validTo === null || indexStart(asOf) < index.validTo);
      if (isValidAt(interval, asOf)) assert.ok(inIndex, `valid at ${asOf.toISOString()} but not in the index: ${JSON.stringify(interval)}`);
    }
    assert.equal(indexEnd(at('2024-03-01T08:00:00.001Z')), indexStart(at('2024-03-01T08:00:00Z')) + 1, 'ends round up');
  });
});

describe('Lucene and query length', () => {
  it('treats operators, quotes, colons and wildcards as words, and cuts queries to 64 terms', () => {
    assert.equal(luceneQuery('Who is NOT "the" PM: a* OR b?'), 'who is not \\"the\\" pm\\: a\\* or b\\?');
    assert.equal(queryTerms(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ')).split(' ').length, 64);
    assert.equal(queryTerms('x'.repeat(900_000)).length, 1_000, 'one endless word is cut too');
  });
});

describe('retrieval with date-time snapshots and hostile text', () => {
  let runtime: Runtime;

  before(async () => {
    runtime = await openTestRuntime();
    await resetKnowledge(runtime);
    const { ingest } = runtime.services;
    const snapshot = (text: string) => [article('Weather station', text), article('Lighthouse', 'The lighthouse keeper logs every passing ship.')];
    // Two snapshots on one day, and versions created and closed within it.
    await ingest.ingest(snapshot('The morning reading at the weather station shows fog over the harbour.'), {
      takenAt: at('2024-03-01T08:00:00Z'),
      source: 'test',
    });
    await ingest.ingest(snapshot('The evening reading at the weather station shows a gale over the harbour.'), {
      takenAt: at('2024-03-01T20:00:30Z'),
      source: 'test',
    });
    await runtime.services.retrieval.catchUp();
  });
  after(async () => {
    await runtime.close();
  });

  it('returns, in every mode, exactly the version valid at the instant asked', async () => {
    const cases: Array<[string, string | null]> = [
      ['2024-03-01T07:59:00Z', null],
      ['2024-03-01T08:00:00Z', 'fog'],
      ['2024-03-01T19:59:59Z', 'fog'],
      // Same minute as the change: the native index (whole minutes) passes both versions; the exact re-check keeps one.
      ['2024-03-01T20:00:10Z', 'fog'],
      ['2024-03-01T20:00:30Z', 'gale'],
      ['2024-03-02T00:00:00Z', 'gale'],
    ];
    for (const mode of ALL_MODES) {
      for (const unit of [SearchUnit.PASSAGE, SearchUnit.SENTENCE]) {
        for (const [asOf, expected] of cases) {
          const hits = await runtime.services.retrieval.search('weather station reading over the harbour', { asOf: at(asOf), k: 5, mode, unit });
          const station = hits.filter((hit) => hit.articleId === 'Weather station');
          const label = `${mode}/${unit} at ${asOf}`;
          if (expected === null) assert.deepEqual(station, [], label);
          else
            assert.deepEqual(
              station.map((hit) => hit.text.includes(expected)),
              [true],
              `${label}: ${station.map((hit) => hit.text).join(' | ')}`,
            );
          for (const hit of hits) assert.ok(isValidAt(hit, at(asOf)), `${label}: every hit is valid at asOf`);
        }
      }
    }
    assert.equal(runtime.services.retrieval.status().syncError, null, 'the version closed on its own day was indexed without error');
  });

  it('answers any text without an error: Lucene syntax, control characters, a megabyte', async () => {
    const hostile = [
      'Who is NOT the keeper?',
      'AND OR NOT',
      '"unbalanced',
      'title:lighthouse AND text:*',
      '*?~^',
      'a\u0000b\u202e',
      ')}]) MATCH (n) DETACH DELETE n //',
      'ship '.repeat(200_000),
    ];
    for (const mode of ALL_MODES) {
      for (const query of hostile) {
        const started = performance.now();
        const hits = await runtime.services.retrieval.search(query, { asOf: at('2024-03-02T00:00:00Z'), k: 3, mode, unit: SearchUnit.PASSAGE });
        assert.ok(Array.isArray(hits));
        assert.ok(performance.now() - started < 10_000, `${mode}: ${query.slice(0, 20)} took too long`);
      }
    }
    const keeper = await runtime.services.retrieval.search('Who is NOT the keeper?', {
      asOf: at('2024-03-02T00:00:00Z'),
      k: 1,
      mode: SearchMode.LEXICAL,
      unit: SearchUnit.PASSAGE,
    });
    assert.equal(keeper[0]?.articleId, 'Lighthouse', 'NOT is a word, not an operator that excludes');
  });
});

describe('a whole corpus replaced within one minute', () => {
  let runtime: Runtime;
  const stations = Array.from({ length: 40 }, (_, i) => `Station ${i + 1}`);

  before(async () => {
    runtime = await openTestRuntime();
    await resetKnowledge(runtime);
    const { ingest } = runtime.services;
    // The first versions match the query best and are all closed 30 s later, in the same minute.
    await ingest.ingest(
      stations.map((id) => article(id, `${id} issued a gale warning for the northern coast.`)),
      { takenAt: at('2024-04-01T12:00:00Z'), source: 'test', complete: true },
    );
    await ingest.ingest(
      stations.map((id) => article(id, `${id} records calm weather and clear skies over the valley.`)),
      { takenAt: at('2024-04-01T12:00:30Z'), source: 'test', complete: true },
    );
    await runtime.services.retrieval.catchUp();
  });
  after(async () => {
    await runtime.close();
  });

  it('still returns k valid hits when the native index passes more closed versions than the margin', async () => {
    for (const mode of [SearchMode.DENSE, SearchMode.HYBRID]) {
      const hits = await runtime.services.retrieval.search('gale warning for the coast', {
        asOf: at('2024-04-01T12:00:45Z'),
        k: 10,
        mode,
        unit: SearchUnit.PASSAGE,
      });
      assert.equal(hits.length, 10, mode);
      assert.ok(
        hits.every((hit) => hit.text.includes('calm weather')),
        `${mode}: only the versions valid at 12:00:45`,
      );
    }
  });

  it('refuses vectors of another embedder than the store has', async () => {
    const { RetrievalRepository } = await import('../../src/graph/retrievalRepository.js');
    const outcome = await new RetrievalRepository(runtime.services.db).storeEmbeddings('Passage', 'other-model@3d', 1, [
      { id: 'Station 1', embedding: [1, 0, 0] },
    ]);
    assert.deepEqual(outcome, { stored: false, storeEmbedderId: runtime.services.retrieval.embedderId });
  });
});

describe('a search whose best candidates are all closed versions', () => {
  let runtime: Runtime;
  const buoys = Array.from({ length: 150 }, (_, i) => `Buoy ${i + 1}`);

  before(async () => {
    runtime = await openTestRuntime();
    await resetKnowledge(runtime);
    const { ingest } = runtime.services;
    // Short, closed versions that Lucene and the vector index rank above the one valid match.
    await ingest.ingest(
      buoys.map((id) => article(id, `${id} reported a gale warning.`)),
      { takenAt: at('2024-05-01T00:00:00Z'), source: 'test' },
    );
    await ingest.ingest(
      [
        ...buoys.map((id) => article(id, `${id} reported calm seas.`)),
        article(
          'Harbour office',
          'The harbour office keeps the records of shipping, tides, moorings and fees for visiting yachts, and it posted a gale warning for the coming night.',
        ),
      ],
      { takenAt: at('2024-05-02T00:00:00Z'), source: 'test' },
    );
    await runtime.services.retrieval.catchUp();
  });
  after(async () => {
    await runtime.close();
  });

  it('searches deeper than the first candidates until it finds the valid versions, in every mode', async () => {
    for (const mode of ALL_MODES) {
      const hits = await runtime.services.retrieval.search('gale warning', { asOf: at('2024-05-03T00:00:00Z'), k: 3, mode, unit: SearchUnit.PASSAGE });
      assert.equal(hits[0]?.articleId, 'Harbour office', `${mode}: ${hits.map((hit) => hit.text).join(' | ')}`);
      assert.ok(
        hits.every((hit) => isValidAt(hit, at('2024-05-03T00:00:00Z'))),
        mode,
      );
    }
  });
});

describe('an ingest behind another one’s embedding backlog', () => {
  let runtime: Runtime;
  const backlog = Array.from({ length: 60 }, (_, i) => `Lock ${i + 1}`);
  const lockText = (id: string) =>
    Array.from({ length: 8 }, (_, s) => `${id} on the old canal raised barge number ${s + 1} by two metres before noon.`).join(' ');

  before(async () => {
    runtime = await openTestRuntime();
    await resetKnowledge(runtime);
    // Nothing embeds yet: the worker starts with the first catch-up.
    await runtime.services.ingest.ingest(
      backlog.map((id) => article(id, lockText(id))),
      { takenAt: at('2024-06-01T00:00:00Z'), source: 'test' },
    );
    await runtime.services.ingest.ingest([article('Lighthouse keeper', 'The lighthouse keeper rows out to the island every Sunday.')], {
      takenAt: at('2024-06-02T00:00:00Z'),
      source: 'test',
    });
  });
  after(async () => {
    await runtime.close();
  });

  it('waits only for its own snapshot: the worker embeds the newest units first and the older backlog after', async () => {
    const { RetrievalRepository } = await import('../../src/graph/retrievalRepository.js');
    const repository = new RetrievalRepository(runtime.services.db);
    for (const label of ['Passage', 'Sentence'] as const) {
      const [first] = await repository.pendingEmbeddings(label, 1);
      assert.match(first!.text, /lighthouse keeper/, `${label}: the newest snapshot's unit comes first`);
    }
    const { waitedFor } = await runtime.services.retrieval.catchUp(undefined, at('2024-06-02T00:00:00Z'));
    const backlogLeft = (await repository.countPendingEmbeddings('Sentence')) + (await repository.countPendingEmbeddings('Passage'));
    assert.ok(waitedFor >= 1 && waitedFor <= 2, `the keeper's passage and sentence: ${waitedFor}`);
    assert.ok(backlogLeft > 100, `the scoped wait returned before the older backlog was embedded (${backlogLeft} of 540 left)`);
    const hits = await runtime.services.retrieval.search('who rows out to the island', {
      asOf: at('2024-06-03T00:00:00Z'),
      k: 1,
      mode: SearchMode.DENSE,
      unit: SearchUnit.SENTENCE,
    });
    assert.equal(hits[0]?.articleId, 'Lighthouse keeper', 'searchable when the wait returns');
    await runtime.services.retrieval.catchUp();
    assert.equal((await repository.countPendingEmbeddings('Sentence')) + (await repository.countPendingEmbeddings('Passage')), 0);
  });
});

describe('a server beside a CLI ingest in another process', () => {
  let runtime: Runtime;
  let server: RunningServer;
  const scratch = mkdtempSync(join(tmpdir(), 'chronoql-sync-'));

  before(async () => {
    runtime = await openTestRuntime({ changeFeed: true });
    await resetKnowledge(runtime);
    server = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('warn') });
    // What `chronoql serve` does: embed in the background and sync the vector indexes every 2 s.
    runtime.services.retrieval.keepFresh(2000, () => {});
  });
  after(async () => {
    await server.close();
    await runtime.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const searchOverHttp = async (mode: SearchMode): Promise<string[]> => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query($q: String!, $mode: SearchMode!) { search(query: $q, asOf: "2024-05-02", k: 3, mode: $mode) { article { id } } }',
        variables: { q: 'Which rare monkey lives on Zanzibar?', mode },
      }),
    });
    const body = (await response.json()) as { data?: { search: Array<{ article: { id: string } }> }; errors?: unknown };
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    return body.data!.search.map((hit) => hit.article.id);
  };

  it('finds what the CLI ingested through DENSE, NEO4J_VECTOR and HYBRID within one refresh', { timeout: 240_000 }, async () => {
    const file = join(scratch, 'snapshot.jsonl');
    const articles = [
      {
        id: 'Zanzibar red colobus',
        title: 'Zanzibar red colobus',
        text: 'The Zanzibar red colobus is an endangered primate found only on Unguja island.',
        infobox: {},
      },
      { id: 'Harbour', title: 'Harbour', text: 'A harbour is a sheltered body of water where ships can be docked.', infobox: {} },
    ];
    writeFileSync(file, articles.map((a) => JSON.stringify(a)).join('\n') + '\n');
    const env = { NEO4J_URI: runtime.neo4j.uri, NEO4J_USER: runtime.neo4j.user, NEO4J_PASSWORD: runtime.neo4j.password, CHRONOQL_DATA_DIR: testDataDir };
    const ingest = await runChronoql(['ingest', file, '--taken-at', '2024-05-01'], env).finished;
    assert.equal(ingest.code, 0, ingest.output);
    assert.match(ingest.output, /searchable after/);
    // The CLI returns once every unit has its vector in Neo4j; the server's next sync (2 s) indexes them.
    const deadline = Date.now() + 2000 + 3000;
    const found = new Map<SearchMode, string[]>();
    for (const mode of [SearchMode.DENSE, SearchMode.NEO4J_VECTOR, SearchMode.HYBRID]) {
      for (;;) {
        const ids = await searchOverHttp(mode);
        if (ids[0] === 'Zanzibar red colobus' || Date.now() > deadline) {
          found.set(mode, ids);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    for (const [mode, ids] of found) assert.equal(ids[0], 'Zanzibar red colobus', `${mode}: ${ids.join(', ')}`);
    const health = (await (await fetch(server.url.replace('/graphql', '/health'))).json()) as {
      status: string;
      retrieval: { embedder: string; indexedRows: Record<string, number>; problem: string | null };
    };
    assert.equal(health.status, 'ok');
    assert.equal(health.retrieval.problem, null);
    assert.ok(health.retrieval.indexedRows.PASSAGE >= 2, JSON.stringify(health));
    // The pending gauge is what the server's worker saw at its last pass (one every 2 s).
    let metrics = '';
    for (const until = Date.now() + 6000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 250))) {
      metrics = await (await fetch(server.url.replace('/graphql', '/metrics'))).text();
      if (/chronoql_embedding_pending 0\n/.test(metrics)) break;
    }
    assert.match(metrics, /chronoql_vector_index_rows\{unit="PASSAGE"\} [1-9]/);
    assert.match(metrics, /chronoql_embedding_pending 0\n/);
  });

  it('refuses a process configured with another embedder than the store, saying how to switch', { timeout: 120_000 }, async () => {
    const env = {
      NEO4J_URI: runtime.neo4j.uri,
      NEO4J_USER: runtime.neo4j.user,
      NEO4J_PASSWORD: runtime.neo4j.password,
      CHRONOQL_DATA_DIR: testDataDir,
      CHRONOQL_EMBEDDER: 'wink-sif',
    };
    const file = join(scratch, 'other.jsonl');
    writeFileSync(file, JSON.stringify({ id: 'Harbour', title: 'Harbour', text: 'A harbour shelters ships.', infobox: {} }) + '\n');
    const refused = await runChronoql(['ingest', file, '--taken-at', '2024-06-01'], env).finished;
    assert.equal(refused.code, 1);
    assert.match(refused.output, /made by the embedder onnx:e5-small-v2-q@384d, but this process is configured for wink-sif-100d@1/);
    assert.match(refused.output, /chronoql reembed/);
    assert.doesNotMatch(refused.output, /\n\s+at /, 'a clear message, not a stack trace');
  });
});
