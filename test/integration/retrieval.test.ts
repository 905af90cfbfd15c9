import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OPEN_VALIDITY_KEY, validityKeyCypher } from '../../src/graph/validity.js';
import { SearchMode, SearchUnit } from '../../src/retrieval/retriever.js';
import { RetrievalService } from '../../src/retrieval/retrievalService.js';
import type { Logger } from '../../src/platform/logger.js';
import type { Runtime } from '../../src/app/runtime.js';
import { article, day, execute, openTestRuntime, resetKnowledge, testDataDir } from '../support/runtime.js';

describe('retrieval', () => {
  let runtime: Runtime;
  const ALL_MODES = [SearchMode.HYBRID, SearchMode.DENSE, SearchMode.LEXICAL, SearchMode.NEO4J_VECTOR];

  before(async () => {
    runtime = await openTestRuntime();
    await resetKnowledge(runtime);
    const { ingest, retrieval } = runtime.services;
    await ingest.ingest(
      [
        article('France', 'France is a country in Western Europe.\n\nGabriel Attal is the prime minister of France.', { 'Prime Minister': 'Gabriel Attal' }),
        article('Bread', 'Bread is a staple food prepared from a dough of flour and water, usually by baking.'),
        article('Mount Everest', 'Mount Everest is the highest mountain on Earth above sea level.'),
      ],
      { takenAt: day('2024-07-01'), source: 'test' },
    );
    await ingest.ingest(
      [
        article('France', 'France is a country in Western Europe.\n\nMichel Barnier is the prime minister of France.', { 'Prime Minister': 'Michel Barnier' }),
        article('Bread', 'Bread is a staple food prepared from a dough of flour and water, usually by baking.'),
      ],
      { takenAt: day('2024-10-01'), source: 'test' },
    );
    await retrieval.catchUp();
  });
  after(async () => {
    await runtime.close();
  });

  it('returns only units valid at asOf, in every mode and for both units', async () => {
    for (const mode of ALL_MODES) {
      for (const unit of [SearchUnit.PASSAGE, SearchUnit.SENTENCE]) {
        const label = `${mode}/${unit}`;
        const summer = await runtime.services.retrieval.search('prime minister of France', { asOf: day('2024-08-01'), k: 10, mode, unit });
        const autumn = await runtime.services.retrieval.search('prime minister of France', { asOf: day('2024-10-02'), k: 10, mode, unit });
        const early = await runtime.services.retrieval.search('prime minister of France', { asOf: day('2024-01-01'), k: 10, mode, unit });
        assert.ok(
          summer.some((hit) => hit.text.includes('Gabriel Attal')),
          `${label}: Attal in summer`,
        );
        assert.ok(!summer.some((hit) => hit.text.includes('Barnier')), `${label}: no Barnier in summer`);
        assert.ok(
          autumn.some((hit) => hit.text.includes('Michel Barnier')),
          `${label}: Barnier in autumn`,
        );
        assert.ok(!autumn.some((hit) => hit.text.includes('Attal')), `${label}: no Attal in autumn`);
        assert.deepEqual(early, [], `${label}: nothing before the first snapshot`);
        for (const hit of [...summer, ...autumn]) {
          assert.ok(hit.validFrom <= day('2024-10-02') && (hit.validTo === null || hit.validTo > day('2024-08-01')));
        }
      }
    }
  });

  it('ranks the relevant passage first and reports both retrievers in hybrid hits', async () => {
    const hits = await runtime.services.retrieval.search('who is the prime minister of France', {
      asOf: day('2024-10-02'),
      k: 3,
      mode: SearchMode.HYBRID,
      unit: SearchUnit.PASSAGE,
    });
    assert.match(hits[0]!.text, /Michel Barnier is the prime minister of France/);
    assert.equal(hits[0]!.rank, 1);
    assert.ok(hits[0]!.denseScore !== null && hits[0]!.lexicalScore !== null);
    assert.deepEqual(
      hits.map((h) => h.rank),
      hits.map((_, i) => i + 1),
    );
    assert.ok(hits.every((h, i) => i === 0 || hits[i - 1]!.score >= h.score));
  });

  it('keeps an unchanged passage in one node and embeds only new versions', async () => {
    const { data } = await execute(
      runtime,
      `{ a: search(query: "bread dough flour", asOf: "2024-07-02", k: 1, mode: LEXICAL) { id validFrom validTo }
      b: search(query: "bread dough flour", asOf: "2024-10-02", k: 1, mode: LEXICAL) { id } }`,
    );
    assert.equal(data.a[0].id, data.b[0].id);
    assert.equal(data.a[0].validTo, null);
    assert.equal((await runtime.services.retrieval.catchUp()).embedded, 0);
  });

  it('serves search and batchSearch over GraphQL with validation', async () => {
    const { data, errors } = await execute(
      runtime,
      `{ search(query: "prime minister", asOf: "2024-08-01", k: 2) { rank text article { id } }
         batchSearch(queries: ["highest mountain", "bread"], k: 1, mode: DENSE) { text } }`,
    );
    assert.equal(errors, undefined);
    assert.equal(data.search[0].article.id, 'France');
    assert.match(data.batchSearch[0][0].text, /Everest/);
    assert.match(data.batchSearch[1][0].text, /Bread/);
    const bad = await execute(runtime, '{ search(query: "x", k: 0) { id } }');
    assert.equal(bad.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT');
  });
  it('never trusts vectors of a store that was emptied under it', async () => {
    const query = { asOf: day('2025-01-02'), k: 10, mode: SearchMode.DENSE, unit: SearchUnit.PASSAGE };
    assert.ok((await runtime.services.retrieval.search('bread', query)).length > 1);
    await resetKnowledge(runtime);
    await runtime.services.ingest.ingest([article('Bread', 'Bread is baked from flour and water.')], { takenAt: day('2025-01-01'), source: 'test' });
    await runtime.services.retrieval.catchUp();
    const hits = await runtime.services.retrieval.search('bread', query);
    assert.deepEqual(
      hits.map((hit) => hit.text),
      ['Bread is baked from flour and water.'],
    );
  });

  it('loads a whole save when processes sharing a data directory save their indexes at once', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'chronoql-saves-'));
    const open = () => RetrievalService.open({ db: runtime.services.db, dataDir, connection: runtime.neo4j, embedderConfig: runtime.config.embedder });
    const indexed = runtime.services.retrieval.status().indexedRows;
    try {
      for (let round = 0; round < 5; round += 1) {
        // Both build the index from Neo4j, then save it on close, at the same time.
        await rm(join(dataDir, 'indexes'), { recursive: true, force: true });
        const writers = [await open(), await open()];
        await Promise.all(writers.map((writer) => writer.refresh()));
        await Promise.all(writers.map((writer) => writer.close()));
        const reader = await open();
        try {
          assert.equal((await reader.refresh()).added, 0, `round ${round}: the saved rows and vectors are one save's`);
          assert.deepEqual(reader.status().indexedRows, indexed, `round ${round}`);
        } finally {
          await reader.close();
        }
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  // Last: it closes the runtime's retrieval service.
  it('rebuilds the vector index from Neo4j when the saved index is corrupt or deleted', async () => {
    const query = { asOf: day('2024-10-02'), k: 5, mode: SearchMode.DENSE, unit: SearchUnit.PASSAGE };
    const before = await runtime.services.retrieval.search('highest mountain', query);
    await runtime.services.retrieval.close();
    const [embedderDirectory] = await readdir(join(testDataDir, 'indexes'));
    const directory = join(testDataDir, 'indexes', embedderDirectory!);
    const { generation } = JSON.parse(await readFile(join(directory, 'passage.json'), 'utf8')) as { generation: string };
    const saved = join(directory, generation, 'vectors');
    const bytes = await readFile(saved);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x40; // one bit of one vector
    await writeFile(saved, bytes);
    for (const damage of ['corrupt', 'deleted']) {
      if (damage === 'deleted') await rm(join(testDataDir, 'indexes'), { recursive: true, force: true });
      const warnings: string[] = [];
      const log = { warn: (message: string) => warnings.push(message), info: () => {}, error: () => {}, debug: () => {} } as unknown as Logger;
      const reopened = await RetrievalService.open({
        db: runtime.services.db,
        dataDir: testDataDir,
        connection: runtime.neo4j,
        embedderConfig: runtime.config.embedder,
        log,
      });
      try {
        const report = await reopened.refresh();
        assert.ok(report.added > 0, damage);
        const after = await reopened.search('highest mountain', query);
        assert.deepEqual(
          after.map((h) => [h.id, h.score.toFixed(5)]),
          before.map((h) => [h.id, h.score.toFixed(5)]),
        );
        if (damage === 'corrupt')
          assert.ok(
            warnings.some((w) => /saved Passage index cannot be used \(.*corrupt vectors\); rebuilding/.test(w)),
            warnings.join('\n'),
          );
      } finally {
        await reopened.close();
      }
    }
  });
});

describe('lexical search text', () => {
  let runtime: Runtime;
  const club = (title: string, ground = 'the Allianz Arena') => ({
    id: 'club',
    title,
    text: `The club plays in ${ground}.\n\nHerbert Hainer has been club president since 2019.`,
    infobox: {},
  });
  const lexical = (query: string, asOf: string, unit = SearchUnit.PASSAGE) =>
    runtime.services.retrieval.search(query, { asOf: day(asOf), k: 5, mode: SearchMode.LEXICAL, unit });

  before(async () => {
    runtime = await openTestRuntime();
    await resetKnowledge(runtime);
    await runtime.services.ingest.ingest([club('Rekordmeister'), article('Madrid', 'Florentino Pérez has been club president since 2009.')], {
      takenAt: day('2024-01-01'),
      source: 'test',
    });
  });
  after(async () => {
    await runtime.close();
  });

  it("finds a passage and a sentence by their article's title, which their text never names", async () => {
    for (const unit of [SearchUnit.PASSAGE, SearchUnit.SENTENCE]) {
      const byTitle = await lexical('Rekordmeister', '2024-02-01', unit);
      assert.ok(
        byTitle.some((hit) => hit.text === 'Herbert Hainer has been club president since 2019.'),
        unit,
      );
      const hits = await lexical('president of the Rekordmeister', '2024-02-01', unit);
      assert.equal(hits[0]?.text, 'Herbert Hainer has been club president since 2019.', unit);
    }
  });

  it('searches the current title after a rename; a version closed by it keeps the title of its time', async () => {
    const [before] = await lexical('Rekordmeister president', '2024-02-01');
    await runtime.services.ingest.ingest([club('FC Bayern Munich', 'Munich')], { takenAt: day('2024-03-01'), source: 'test' });
    const [after] = await lexical('Bayern president', '2024-03-02');
    assert.equal(after?.id, before?.id, 'the unchanged passage keeps its node');
    assert.ok(!(await lexical('Rekordmeister', '2024-03-02')).some((hit) => hit.articleId === 'club'));
    const [closed] = await lexical('Rekordmeister Allianz Arena', '2024-02-01');
    assert.equal(closed?.text, 'The club plays in the Allianz Arena.');
    assert.ok(
      !(await lexical('Bayern', '2024-02-01')).some((hit) => hit.text === 'The club plays in the Allianz Arena.'),
      'no new title on the closed version',
    );
  });

  it('asks Lucene only for the versions valid as of the date, also in a store that grew after it', async () => {
    const later = Array.from({ length: 300 }, (_, i) => article(`later ${i}`, `Member ${i} has been club president since 2024.`));
    await runtime.services.ingest.ingest(later, { takenAt: day('2024-06-01'), source: 'test' });
    const roundTrips = async (asOf: string) => {
      const start = runtime.services.db.queryCount;
      const hits = await lexical('club president', asOf);
      return { trips: runtime.services.db.queryCount - start, articles: hits.map((hit) => hit.articleId) };
    };
    const early = await roundTrips('2024-02-01');
    assert.deepEqual(new Set(early.articles), new Set(['club', 'Madrid']), 'only the versions valid then');
    assert.equal(early.trips, (await roundTrips('2024-06-02')).trips, 'no deeper candidate list for the earlier date');
    for (const words of ['the of', '(((', 'AND']) assert.deepEqual(await lexical(words, '2024-02-01'), [], `no word to search in "${words}"`);
    const [{ stale }] = await runtime.services.db.run<{ stale: number }>(
      `MATCH (u) WHERE (u:Sentence OR u:Passage)
         AND (u.validFromKey <> ${validityKeyCypher('u.validFrom')}
              OR u.validToKey <> CASE WHEN u.validTo IS NULL THEN '${OPEN_VALIDITY_KEY}' ELSE ${validityKeyCypher('u.validTo')} END)
       RETURN count(u) AS stale`,
    );
    assert.equal(stale, 0, 'every unit carries the keys of its valid time');
  });
});
