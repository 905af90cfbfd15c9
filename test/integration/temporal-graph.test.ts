import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AnsweringRepository } from '../../src/graph/answeringRepository.js';
import { countNodes } from '../../src/graph/maintenance.js';
import { IngestLeaseLostError, InvalidSnapshotError, SnapshotOrderError } from '../../src/ingest/errors.js';
import { readSnapshotFile } from '../../src/ingest/snapshotReader.js';
import type { Runtime } from '../../src/app/runtime.js';
import { EventTimeRepository } from '../../src/graph/eventTimeRepository.js';
import { backfillEventTimes } from '../../src/ingest/eventTimeBackfill.js';
import { SearchMode, SearchUnit } from '../../src/retrieval/retriever.js';
import { article, day, execute, openTestRuntime, resetKnowledge } from '../support/runtime.js';

const FRANCE_2024_07 = article(
  'France',
  'France is a country in Western Europe. Its capital is Paris.\n\nGabriel Attal has been prime minister since 9 January 2024. The president is Emmanuel Macron.',
  { 'Prime Minister': 'Gabriel Attal', Capital: 'Paris', President: 'Emmanuel Macron', Anthem: 'La Marseillaise' },
);
const FRANCE_2024_10 = article(
  'France',
  'France is a country in Western Europe. Its capital is Paris.\n\nMichel Barnier has been prime minister since 5 September 2024. The president is Emmanuel Macron. Parliament was dissolved in June 2024.',
  { 'Prime Minister': 'Michel Barnier', Capital: 'Paris', President: 'Emmanuel Macron', Currency: 'Euro' },
);
const EVEREST = article('Mount Everest', 'Mount Everest is the highest mountain above sea level. It lies in the Himalayas.', {
  Elevation: '8,849 m',
});

const MILLS = article(
  'Gary Mills',
  [
    'Gary Mills (born 11 November 1961) is an English football manager and former player.',
    'He managed Alfreton Town of the Conference North from 2005 to 2007. Two years later he joined Tamworth.',
    'Mills was appointed manager of York City in October 2011 and left in 2013.',
  ].join('\n\n'),
  { 'Current team': 'Wrexham', office: 'Manager of York City', term_start: 'October 2011', term_end: '2013', Clubs: 'Alfreton Town (2005–2007)' },
);
const TIMES = '{ from to text start end }';
const times = (list: Array<{ from: string | null; to: string | null; text: string }>): string[] =>
  list.map((time) => `${time.text} = ${time.from?.slice(0, 10) ?? ''}..${time.to?.slice(0, 10) ?? ''}`);

describe('temporal knowledge graph', () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await openTestRuntime();
  });
  after(async () => {
    await runtime.close();
  });
  beforeEach(async () => {
    await resetKnowledge(runtime);
  });

  async function ingestBoth(): Promise<void> {
    await runtime.services.ingest.ingest([FRANCE_2024_07, EVEREST], { takenAt: day('2024-07-01'), source: 'test' });
    await runtime.services.ingest.ingest([FRANCE_2024_10, EVEREST], { takenAt: day('2024-10-01'), source: 'test' });
  }

  it('answers facts as of a date, and their history', async () => {
    await ingestBoth();
    const { data, errors } = await execute(
      runtime,
      `{
        before: fact(subject: "France", attribute: "Prime Minister", asOf: "2024-08-01") { value outdated change }
        after: fact(subject: "France", attribute: "prime minister", asOf: "2024-10-01") { value outdated change previous { value } }
        tooEarly: fact(subject: "France", attribute: "Prime Minister", asOf: "2020-01-01") { value }
        history: factHistory(subject: "France", attribute: "Prime Minister") { value validFrom validTo next { value } }
        removed: fact(subject: "France", attribute: "Anthem", asOf: "2024-10-01T12:00:00Z") { value }
      }`,
    );
    assert.equal(errors, undefined);
    assert.deepEqual(data.before, { value: 'Gabriel Attal', outdated: true, change: null });
    assert.deepEqual(data.after, { value: 'Michel Barnier', outdated: false, change: 'UPDATED', previous: { value: 'Gabriel Attal' } });
    assert.equal(data.tooEarly, null);
    assert.equal(data.removed, null);
    assert.deepEqual(data.history, [
      { value: 'Gabriel Attal', validFrom: '2024-07-01T00:00:00.000Z', validTo: '2024-10-01T00:00:00.000Z', next: { value: 'Michel Barnier' } },
      { value: 'Michel Barnier', validFrom: '2024-10-01T00:00:00.000Z', validTo: null, next: null },
    ]);
  });

  it('labels sentences per snapshot and keeps unchanged sentences in one node', async () => {
    await ingestBoth();
    const { data, errors } = await execute(
      runtime,
      `{
        article(id: "France") {
          first: sentences(asOf: "2024-07-15") { id index label text }
          second: sentences(asOf: "2024-10-01") { id index label text previous { text } }
          deleted: deletedSentences(asOf: "2024-10-02") { text label }
          text(asOf: "2024-07-15")
          none: sentences(asOf: "2023-01-01") { id }
          facts(asOf: "2024-10-01") { attribute value change }
        }
      }`,
    );
    assert.equal(errors, undefined);
    const { first, second } = data.article;
    assert.deepEqual(
      first.map((s: any) => s.label),
      [null, null, null, null],
    );
    assert.deepEqual(
      second.map((s: any) => [s.index, s.label]),
      [
        [0, 'UNCHANGED'],
        [1, 'UNCHANGED'],
        [2, 'CHANGED'],
        [3, 'UNCHANGED'],
        [4, 'NEW'],
      ],
    );
    assert.equal(second[0].id, first[0].id, 'an unchanged sentence keeps its node');
    assert.equal(second[3].id, first[3].id);
    assert.equal(second[2].previous.text, 'Gabriel Attal has been prime minister since 9 January 2024.');
    assert.deepEqual(data.article.deleted, []);
    assert.equal(
      data.article.text,
      'France is a country in Western Europe. Its capital is Paris.\n\nGabriel Attal has been prime minister since 9 January 2024. The president is Emmanuel Macron.',
    );
    assert.deepEqual(data.article.none, []);
    assert.deepEqual(
      data.article.facts.map((f: any) => [f.attribute, f.value, f.change]),
      [
        ['Capital', 'Paris', null],
        ['Currency', 'Euro', 'NEW'],
        ['President', 'Emmanuel Macron', null],
        ['Prime Minister', 'Michel Barnier', 'UPDATED'],
      ],
    );
  });

  it('lists deleted sentences and keeps positions answerable after insertions', async () => {
    await ingestBoth();
    await runtime.services.ingest.ingest(
      [article('France', 'A new opening sentence. France is a country in Western Europe.\n\nThe president is Emmanuel Macron.'), EVEREST],
      { takenAt: day('2025-01-01'), source: 'test' },
    );
    const { data } = await execute(
      runtime,
      `{ article(id: "France") {
          now: sentences { index label text }
          deleted: deletedSentences(asOf: "2025-02-01") { text label }
          then: sentences(asOf: "2024-12-31") { index text }
      } }`,
    );
    assert.deepEqual(
      data.article.now.map((s: any) => [s.index, s.label]),
      [
        [0, 'NEW'],
        [1, 'UNCHANGED'],
        [2, 'UNCHANGED'],
      ],
    );
    assert.deepEqual(
      data.article.deleted.map((s: any) => [s.text, s.label]),
      [
        ['Its capital is Paris.', 'DELETED'],
        ['Michel Barnier has been prime minister since 5 September 2024.', 'DELETED'],
        ['Parliament was dissolved in June 2024.', 'DELETED'],
      ],
    );
    assert.equal(data.article.then.length, 5);
    assert.equal(data.article.then[4].text, 'Parliament was dissolved in June 2024.');
  });

  it('changes nothing when the same snapshot is ingested again', async () => {
    await ingestBoth();
    const counts = async () => [
      await countNodes(runtime.services.db, 'Sentence'),
      await countNodes(runtime.services.db, 'Fact'),
      await countNodes(runtime.services.db, 'ChangeEvent'),
    ];
    const before = await counts();
    const again = await runtime.services.ingest.ingest([FRANCE_2024_10, EVEREST], { takenAt: day('2024-10-01'), source: 'test' });
    assert.equal(again.alreadyIngested, true);
    assert.deepEqual(await counts(), before);
  });

  it('resumes an interrupted snapshot without writing twice', async () => {
    await runtime.services.ingest.ingest([FRANCE_2024_07, EVEREST], { takenAt: day('2024-07-01'), source: 'test' });
    // Simulate a run that committed the first batch (France) and then lost contact (a failure of any
    // other kind would roll the snapshot back instead: ingest-safety.test.ts).
    let batches = 0;
    const failing = runtime.services.ingest.ingest([FRANCE_2024_10, EVEREST], {
      takenAt: day('2024-10-01'),
      source: 'test',
      batchSize: 1,
      onProgress: () => {
        batches += 1;
        if (batches === 1) throw new IngestLeaseLostError('2024-10-01');
      },
    });
    await assert.rejects(failing, IngestLeaseLostError);
    await assert.rejects(
      runtime.services.ingest.ingest([EVEREST], { takenAt: day('2024-11-01'), source: 'test' }),
      (error: unknown) => error instanceof SnapshotOrderError && /interrupted/.test(error.message),
    );
    const resumed = await runtime.services.ingest.ingest([FRANCE_2024_10, EVEREST], { takenAt: day('2024-10-01'), source: 'test', batchSize: 1 });
    assert.equal(resumed.articlesResumed, 1);
    const { data } = await execute(runtime, `{ snapshots { id status } changes { totalCount } }`);
    assert.deepEqual(data.snapshots, [
      { id: '2024-07-01', status: 'COMPLETE' },
      { id: '2024-10-01', status: 'COMPLETE' },
    ]);
    // France's second snapshot: 1 changed + 1 new sentence, 1 updated + 1 new + 1 removed fact; 2 ARTICLE_ADDED before.
    assert.equal(data.changes.totalCount, 2 + 5);
  });

  it('refuses a snapshot older than the latest, writing nothing', async () => {
    await ingestBoth();
    const before = await countNodes(runtime.services.db, 'Sentence');
    await assert.rejects(
      runtime.services.ingest.ingest([FRANCE_2024_07], { takenAt: day('2024-08-01'), source: 'test' }),
      (error: unknown) => error instanceof SnapshotOrderError && /older than the latest stored snapshot 2024-10-01/.test(error.message),
    );
    await assert.rejects(
      runtime.services.ingest.ingest([FRANCE_2024_07], { takenAt: day('2024-10-01'), source: 'test' }),
      /already stored \(its content differs\)/,
    );
    assert.equal(await countNodes(runtime.services.db, 'Sentence'), before);
    assert.equal(await countNodes(runtime.services.db, 'Snapshot'), 2);
  });

  it('leaves the database untouched when a file has a bad line', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'chronoql-'));
    const file = join(directory, 'snapshot.jsonl');
    await writeFile(file, JSON.stringify(FRANCE_2024_07) + '\n' + '{"id": "Broken", "text": 12}\n');
    await assert.rejects(
      async () => runtime.services.ingest.ingest(await readSnapshotFile(file), { takenAt: day('2024-07-01'), source: 'test' }),
      (error: unknown) => error instanceof InvalidSnapshotError && /snapshot\.jsonl:2: "text" must be a string/.test(error.message),
    );
    assert.equal(await countNodes(runtime.services.db, 'Article'), 0);
    assert.equal(await countNodes(runtime.services.db, 'Snapshot'), 0);
  });

  it('removes articles missing from a complete snapshot', async () => {
    await ingestBoth();
    await runtime.services.ingest.ingest([FRANCE_2024_10], { takenAt: day('2025-01-01'), source: 'test', complete: true });
    const { data } = await execute(
      runtime,
      `{ article(id: "Mount Everest") { validTo before: text(asOf: "2024-12-01") after: text(asOf: "2025-01-02") facts { value } }
         changes(kinds: [ARTICLE_REMOVED]) { edges { node { articleId at } } } }`,
    );
    assert.equal(data.article.validTo, '2025-01-01T00:00:00.000Z');
    assert.match(data.article.before, /highest mountain/);
    assert.equal(data.article.after, null);
    assert.deepEqual(data.article.facts, []);
    assert.deepEqual(data.changes.edges, [{ node: { articleId: 'Mount Everest', at: '2025-01-01T00:00:00.000Z' } }]);
  });

  it('counts an article as added in a window only when it was first stored in it, not when a removed one comes back', async () => {
    await ingestBoth();
    await runtime.services.ingest.ingest([FRANCE_2024_10], { takenAt: day('2025-01-01'), source: 'test', complete: true });
    await runtime.services.ingest.ingest([FRANCE_2024_10, EVEREST], { takenAt: day('2025-03-01'), source: 'test', complete: true });
    const added = async (from: string): Promise<boolean | undefined> =>
      (await new AnsweringRepository(runtime.services.db).changeProfiles(['Mount Everest'], { from: day(from), to: day('2025-04-01') }, day('2025-04-01'))).get(
        'Mount Everest',
      )?.added;
    assert.equal(await added('2024-12-01'), false, 'stored since 2024-07-01, removed and back on 2025-03-01');
    assert.equal(await added('2024-06-01'), true);
  });

  it('pages articles and changes as Relay connections', async () => {
    await ingestBoth();
    const first = await execute(runtime, `{ articles(first: 1) { totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`);
    assert.equal(first.data.articles.totalCount, 2);
    assert.deepEqual(
      first.data.articles.edges.map((e: any) => e.node.id),
      ['France'],
    );
    assert.equal(first.data.articles.pageInfo.hasNextPage, true);
    const second = await execute(runtime, `query($after: String) { articles(first: 1, after: $after) { edges { node { id } } pageInfo { hasNextPage } } }`, {
      after: first.data.articles.pageInfo.endCursor,
    });
    assert.deepEqual(
      second.data.articles.edges.map((e: any) => e.node.id),
      ['Mount Everest'],
    );
    assert.equal(second.data.articles.pageInfo.hasNextPage, false);
    const filtered = await execute(runtime, `{ articles(titleContains: "everest") { totalCount edges { node { title } } } }`);
    assert.deepEqual(filtered.data.articles.edges, [{ node: { title: 'Mount Everest' } }]);

    const changes = await execute(runtime, `{ changes(first: 3) { totalCount edges { node { seq kind } } pageInfo { hasNextPage } } }`);
    assert.deepEqual(
      changes.data.changes.edges.map((e: any) => e.node.seq),
      [1, 2, 3],
    );
    assert.equal(changes.data.changes.pageInfo.hasNextPage, true);
    const bad = await execute(runtime, `{ changes(first: 100000) { totalCount } }`);
    assert.equal(bad.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT');
  });

  it('costs a constant number of Cypher round trips for a page of articles with their facts', async () => {
    const many = Array.from({ length: 100 }, (_, i) =>
      article(`Article ${String(i).padStart(3, '0')}`, `Sentence ${i}.`, { Leader: `Leader ${i}`, Size: `${i}` }),
    );
    await runtime.services.ingest.ingest(many, { takenAt: day('2024-07-01'), source: 'test' });
    const query = `query($first: Int!) { articles(first: $first) { edges { node { id facts { attribute value previous { value } }
      sentences { text label } changes(first: 2) { totalCount } } } } snapshots { id } }`;
    const roundTrips = async (first: number): Promise<number> => {
      const start = runtime.services.db.queryCount;
      const { data, errors } = await execute(runtime, query, { first });
      assert.equal(errors, undefined);
      assert.equal(data.articles.edges.length, first);
      assert.equal(data.articles.edges[first - 1].node.facts.length, 2);
      return runtime.services.db.queryCount - start;
    };
    const forTen = await roundTrips(10);
    const forHundred = await roundTrips(100);
    assert.equal(forHundred, forTen, 'round trips must not grow with the page size');
    assert.ok(forHundred <= 7, `expected at most 7 round trips, got ${forHundred}`);
  });

  it('reads no change history after an ingest when nothing follows the change feed', async () => {
    await ingestBoth();
    const before = runtime.services.db.queryCount;
    runtime.services.changeFeed.poke();
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(runtime.services.db.queryCount, before);
  });

  describe('event time: what the text says about when things held', () => {
    async function ingestEventTimeArticles(): Promise<void> {
      await runtime.services.ingest.ingest([MILLS, FRANCE_2024_10], { takenAt: day('2024-10-01'), source: 'test' });
    }

    async function stored(): Promise<unknown> {
      const { data, errors } = await execute(
        runtime,
        `{ article(id: "Gary Mills") {
            sentences(asOf: "2024-10-02") { text eventTimes ${TIMES} }
            facts(asOf: "2024-10-02") { attribute eventTimes ${TIMES} }
          }
          passages: search(query: "Gary Mills manager", asOf: "2024-10-02", mode: LEXICAL, k: 10) { text eventTimes ${TIMES} } }`,
      );
      assert.equal(errors, undefined);
      return data;
    }

    it('stores what each sentence, passage and fact states, and shows it', async () => {
      await ingestEventTimeArticles();
      const data = (await stored()) as any;
      const sentence = (start: string) => times(data.article.sentences.find((s: { text: string }) => s.text.startsWith(start)).eventTimes);
      assert.deepEqual(sentence('Gary Mills'), ['11 November 1961 = 1961-11-11..1961-11-12']);
      assert.deepEqual(sentence('He managed'), ['from 2005 to 2007 = 2005-01-01..2008-01-01']);
      assert.deepEqual(sentence('Two years'), ['Two years later = 2009-01-01..2010-01-01'], 'placed from the sentence before it');
      assert.deepEqual(sentence('Mills was'), ['in October 2011 = 2011-10-01..2011-11-01', 'in 2013 = 2013-01-01..2014-01-01']);
      const fact = (attribute: string) => times(data.article.facts.find((f: { attribute: string }) => f.attribute === attribute).eventTimes);
      assert.deepEqual(fact('office'), ['term_start: October 2011, term_end: 2013 = 2011-10-01..2014-01-01']);
      assert.deepEqual(fact('Clubs'), ['2005–2007 = 2005-01-01..2008-01-01']);
      assert.deepEqual(fact('Current team'), []);
      const passage = data.passages.find((p: { text: string }) => p.text.startsWith('He managed'));
      assert.deepEqual(times(passage.eventTimes), ['from 2005 to 2007 = 2005-01-01..2008-01-01', 'Two years later = 2009-01-01..2010-01-01']);
      for (const time of passage.eventTimes) assert.equal(passage.text.slice(time.start, time.end), time.text);
      const wordsStored = await runtime.services.db.run<{ words: string[] | null }>(
        `MATCH (v) WHERE (v:Sentence AND v.text STARTS WITH 'He managed') OR (v:Fact AND v.attribute IN ['office', 'Clubs'])
         RETURN v.eventTimeText AS words ORDER BY v.text, v.attribute`,
      );
      assert.deepEqual(
        wordsStored.map((row) => row.words),
        [null, null, ['term_start: October 2011, term_end: 2013']],
        'words are stored only where the version’s own text does not hold them (the office’s term)',
      );
      // A store written before keeps every time's words: they are read the same.
      await runtime.services.db.run(
        `MATCH (v:Sentence) WHERE v.eventTimeFrom IS NOT NULL SET v.eventTimeText = [i IN range(0, size(v.eventTimeFrom) - 1) | 'as written then']`,
      );
      assert.deepEqual(
        ((await stored()) as any).article.sentences
          .find((s: { text: string }) => s.text.startsWith('He managed'))
          .eventTimes.map((time: { text: string }) => time.text),
        ['as written then'],
      );
    });

    it('searches only the units whose text speaks of the period, in every mode, beside asOf', async () => {
      await ingestEventTimeArticles();
      await runtime.services.retrieval.catchUp();
      for (const mode of [SearchMode.LEXICAL, SearchMode.DENSE, SearchMode.HYBRID]) {
        const hits = await runtime.services.retrieval.search('Which club did Gary Mills manage?', {
          asOf: day('2024-10-02'),
          k: 5,
          mode,
          unit: SearchUnit.PASSAGE,
          during: { from: day('2006-01-01'), to: day('2007-01-01') },
        });
        assert.deepEqual(
          hits.map((hit) => hit.text.slice(0, 10)),
          ['He managed'],
          mode,
        );
      }
      const barnier = await runtime.services.retrieval.search('prime minister', {
        asOf: day('2024-10-02'),
        k: 5,
        mode: SearchMode.LEXICAL,
        unit: SearchUnit.SENTENCE,
        during: { from: day('2025-01-01'), to: null },
      });
      assert.deepEqual(
        barnier.map((hit) => hit.text),
        ['Michel Barnier has been prime minister since 5 September 2024.'],
        'an open interval reaches any later period',
      );
      const { data, errors } = await execute(
        runtime,
        `{ none: search(query: "Gary Mills", mode: LEXICAL, asOf: "2024-10-02", during: {to: "1950-01-01"}) { id }
           batch: batchSearch(queries: ["Gary Mills", "York City"], mode: LEXICAL, asOf: "2024-10-02", during: {from: "2013-06-01", to: "2013-07-01"}) { text } }`,
      );
      assert.equal(errors, undefined);
      assert.deepEqual(data.none, []);
      assert.deepEqual(data.batch, [[{ text: MILLS.text.split('\n\n')[2] }], [{ text: MILLS.text.split('\n\n')[2] }]]);
      const refused = await execute(runtime, `{ a: search(query: "x", during: {}) { id } }`);
      assert.match(refused.errors?.[0]?.message ?? '', /during: give from, to or both/);
      const reversed = await execute(runtime, `{ a: search(query: "x", during: {from: "2020-01-01", to: "2019-01-01"}) { id } }`);
      assert.match(reversed.errors?.[0]?.message ?? '', /from must be before to/);
    });

    it("finds an article's versions that speak of a period, as known at asOf", async () => {
      await ingestEventTimeArticles();
      const repository = new EventTimeRepository(runtime.services.db);
      const period = { from: day('2006-01-01'), to: day('2007-01-01') };
      const sentences = await repository.unitsSpeakingOf('Sentence', ['Gary Mills'], period, day('2024-10-02'));
      assert.deepEqual(
        sentences.map((unit) => unit.text),
        ['He managed Alfreton Town of the Conference North from 2005 to 2007.'],
      );
      assert.deepEqual(await repository.unitsSpeakingOf('Sentence', ['Gary Mills'], period, day('2024-09-30')), [], 'nothing known before the snapshot');
      const storeWide = await repository.unitsSpeakingOf('Passage', null, { from: day('2024-09-10'), to: day('2024-09-11') }, day('2024-10-02'));
      assert.deepEqual(
        storeWide.map((unit) => unit.articleId),
        ['France'],
      );
      const facts = await repository.factsSpeakingOf(['Gary Mills'], { from: day('2012-01-01'), to: null }, day('2024-10-02'));
      assert.deepEqual(
        facts.map((fact) => fact.attribute),
        ['office', 'term_end'],
      );
    });

    it('reads the versions of an older store once, and a second run or a re-run ingest changes nothing', async () => {
      await ingestEventTimeArticles();
      const before = await stored();
      // A store written before event times were read: no event-time properties, and migration 012's label.
      await runtime.services.db.run(
        `MATCH (v) WHERE v:Sentence OR v:Passage OR v:Fact
         REMOVE v.eventTimeFrom, v.eventTimeTo, v.eventTimeText, v.eventTimeStart, v.eventTimeEnd, v.eventFrom, v.eventTo
         SET v:PendingEventTimes`,
      );
      const first = await backfillEventTimes(runtime.services.db);
      assert.deepEqual(first, { articles: 2, versions: 23 });
      assert.deepEqual(await stored(), before);
      assert.deepEqual(await backfillEventTimes(runtime.services.db), { articles: 0, versions: 0 });
      const again = await runtime.services.ingest.ingest([MILLS, FRANCE_2024_10], { takenAt: day('2024-10-01'), source: 'test' });
      assert.equal(again.alreadyIngested, true);
      assert.deepEqual(await stored(), before);
    });
  });
});
