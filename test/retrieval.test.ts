import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chunkPassages } from '../src/ingest/passages.js';
import { escapeLucene } from '../src/graph/retrievalRepository.js';
import { contentTerms, termCoverage } from '../src/text/language.js';
import { DEFAULT_FUSION, fuseCandidates, fusionWeights, lexicalEvidence } from '../src/retrieval/fusion.js';
import { SearchMode, SearchUnit } from '../src/retrieval/retriever.js';
import { RetrievalService } from '../src/retrieval/retrievalService.js';
import type { Logger } from '../src/platform/logger.js';
import type { Runtime } from '../src/app/runtime.js';
import { article, day, execute, openTestRuntime, resetKnowledge, testDataDir } from './support.js';

describe('passage chunking', () => {
  const sentences = (texts: string[], paragraphStarts: number[] = [0]) =>
    texts.map((text, i) => ({ text, startsParagraph: paragraphStarts.includes(i) }));

  it('packs sentences up to the limit and never crosses a paragraph', () => {
    const passages = chunkPassages(sentences(['aaaa.', 'bbbb.', 'cccc.', 'dddd.'], [0, 3]), 12, 2);
    assert.deepEqual(passages, ['aaaa. bbbb.', 'cccc.', 'dddd.']);
  });

  it('cuts an over-long sentence into overlapping windows', () => {
    const passages = chunkPassages(sentences(['0123456789abcdefghij']), 8, 2);
    assert.deepEqual(passages, ['01234567', '6789abcd', 'cdefghij']);
    assert.ok(passages.every((p) => p.length <= 8));
  });

  it('keeps the passages of untouched paragraphs when another paragraph changes', () => {
    const before = chunkPassages(sentences(['One.', 'Two.', 'Three.', 'Four.'], [0, 2]));
    const after = chunkPassages(sentences(['One changed.', 'Two.', 'Three.', 'Four.'], [0, 2]));
    assert.equal(before[1], after[1]);
    assert.notEqual(before[0], after[0]);
  });

  it('judges a lexical match on the stems of the query words that are not stop words', () => {
    const query = contentTerms('Who is the prime minister of France?');
    assert.deepEqual([...query].sort(), ['franc', 'minist', 'prime']);
    assert.equal(termCoverage(query, 'Michel Barnier has been Prime Minister of France since September.'), 1);
    assert.equal(termCoverage(query, 'The ministers of France met the president.'), 2 / 3, 'minist and franc, not prime');
    assert.equal(termCoverage(contentTerms('Who is the Gallic premier?'), 'Michel Barnier has been Prime Minister of France.'), 0);
    assert.equal(termCoverage(contentTerms('who is it?'), 'anything at all'), 0, 'a query of stop words covers nothing');
  });

  it('escapes Lucene syntax so user text is searched as words', () => {
    assert.equal(escapeLucene('who is (the) PM? a+b'), 'who is \\(the\\) PM\\? a\\+b');
  });
});

describe('hybrid fusion weights', () => {
  const hit = (score: number, text: string, searchText?: string) => ({ score, text, searchText });

  it('judges the lexical top hit on its title and text, its margin and its score per question word', () => {
    const evidence = lexicalEvidence('Who is the club president of FC Bayern Munich?', [
      hit(8, 'Herbert Hainer has been club president since 2019.', 'FC Bayern Munich\nHerbert Hainer has been club president since 2019.'),
      hit(4, 'Florentino Pérez has been club president since 2009.'),
    ]);
    assert.deepEqual(evidence, { coverage: 1, margin: 0.5, scorePerTerm: 8 / 5 });
    assert.equal(lexicalEvidence('Who is the club president of FC Bayern Munich?', [hit(8, 'Herbert Hainer has been club president since 2019.')]).coverage, 2 / 5);
    assert.deepEqual(lexicalEvidence('anything', []), { coverage: 0, margin: 0, scorePerTerm: 0 });
  });

  it('lets the lexical list count only when all three clear the chosen thresholds', () => {
    const counted = { dense: DEFAULT_FUSION.denseWeight, lexical: DEFAULT_FUSION.lexicalWeight };
    const denseAlone = { dense: DEFAULT_FUSION.denseWeight, lexical: 0 };
    const strong = { coverage: 1, margin: 0.5, scorePerTerm: 2 };
    assert.deepEqual(fusionWeights(DEFAULT_FUSION, strong, 30), counted);
    assert.deepEqual(fusionWeights(DEFAULT_FUSION, { ...strong, coverage: 0.5 }, 30), denseAlone, 'a top hit holding half the words');
    assert.deepEqual(fusionWeights(DEFAULT_FUSION, { ...strong, margin: 0.01 }, 30), denseAlone, 'a flat BM25 list');
    assert.deepEqual(fusionWeights(DEFAULT_FUSION, { ...strong, scorePerTerm: 0.5 }, 30), denseAlone, 'weak matches of common words');
    assert.deepEqual(fusionWeights({ method: 'weighted', denseWeight: 0.5, lexicalWeight: 0.5 }, { coverage: 0, margin: 0, scorePerTerm: 0 }, 30), { dense: 0.5, lexical: 0.5 });
  });

  // BM25 hits for a question worded unlike them: the lexical list does not count.
  const kneadQuestion = 'Who kneads the dough for the loaves?';
  const breadHits = [
    { id: 'b', score: 1.2, text: 'Bread is baked.' },
    { id: 'a', score: 1.1, text: 'Bread rises.' },
    { id: 'c', score: 0.3, text: 'Flour.' },
  ];

  it('keeps BM25 order when there is no dense list, however weak the lexical evidence', async () => {
    const fused = await fuseCandidates(kneadQuestion, [], breadHits, DEFAULT_FUSION);
    assert.deepEqual(fused.map((hit) => hit.id), ['b', 'a', 'c']);
    assert.ok(fused[0]!.score > fused[1]!.score && fused[1]!.score > fused[2]!.score);
  });

  it('ranks hits tied at the tail as the retrievers did, not by id', async () => {
    // A short dense list and a lexical list that does not count: every lexical-only hit and the
    // last dense hit (min-max puts it at 0) score 0.
    const dense = [
      { id: 'z1', score: 0.9, text: 'Bakers knead dough before the loaves are shaped.' },
      { id: 'z2', score: 0.5, text: 'The dough rests overnight.' },
    ];
    const fused = await fuseCandidates(kneadQuestion, dense, breadHits, DEFAULT_FUSION);
    assert.deepEqual(fused.map((hit) => hit.id), ['z1', 'z2', 'b', 'a', 'c']);
    const both = await fuseCandidates('q', [{ id: 'y', score: 1, text: '' }, { id: 'x', score: 0, text: '' }], [{ id: 'w', score: 2, text: '' }, { id: 'v', score: 1, text: '' }], { method: 'weighted', denseWeight: 0.4, lexicalWeight: 0.6 });
    assert.deepEqual(both.map((hit) => hit.id), ['w', 'y', 'v', 'x'], 'a 0-0 tie goes to the heavier list first');
  });
});

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
        assert.ok(summer.some((hit) => hit.text.includes('Gabriel Attal')), `${label}: Attal in summer`);
        assert.ok(!summer.some((hit) => hit.text.includes('Barnier')), `${label}: no Barnier in summer`);
        assert.ok(autumn.some((hit) => hit.text.includes('Michel Barnier')), `${label}: Barnier in autumn`);
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
    assert.deepEqual(hits.map((h) => h.rank), hits.map((_, i) => i + 1));
    assert.ok(hits.every((h, i) => i === 0 || hits[i - 1]!.score >= h.score));
  });

  it('keeps an unchanged passage in one node and embeds only new versions', async () => {
    const { data } = await execute(runtime, `{ a: search(query: "bread dough flour", asOf: "2024-07-02", k: 1, mode: LEXICAL) { id validFrom validTo }
      b: search(query: "bread dough flour", asOf: "2024-10-02", k: 1, mode: LEXICAL) { id } }`);
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
    assert.deepEqual(hits.map((hit) => hit.text), ['Bread is baked from flour and water.']);
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
      const reopened = await RetrievalService.open({ db: runtime.services.db, dataDir: testDataDir, connection: runtime.neo4j, embedderConfig: runtime.config.embedder, log });
      try {
        const report = await reopened.refresh();
        assert.ok(report.added > 0, damage);
        const after = await reopened.search('highest mountain', query);
        assert.deepEqual(after.map((h) => [h.id, h.score.toFixed(5)]), before.map((h) => [h.id, h.score.toFixed(5)]));
        if (damage === 'corrupt') assert.ok(warnings.some((w) => /saved Passage index cannot be used \(.*corrupt vectors\); rebuilding/.test(w)), warnings.join('\n'));
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
    await runtime.services.ingest.ingest([club('Rekordmeister'), article('Madrid', 'Florentino Pérez has been club president since 2009.')], { takenAt: day('2024-01-01'), source: 'test' });
  });
  after(async () => {
    await runtime.close();
  });

  it("finds a passage and a sentence by their article's title, which their text never names", async () => {
    for (const unit of [SearchUnit.PASSAGE, SearchUnit.SENTENCE]) {
      const byTitle = await lexical('Rekordmeister', '2024-02-01', unit);
      assert.ok(byTitle.some((hit) => hit.text === 'Herbert Hainer has been club president since 2019.'), unit);
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
    assert.ok(!(await lexical('Bayern', '2024-02-01')).some((hit) => hit.text === 'The club plays in the Allianz Arena.'), 'no new title on the closed version');
  });
});
