import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { LeaseRepository } from '../../src/graph/leaseRepository.js';
import { countNodes } from '../../src/graph/maintenance.js';
import { IngestBusyError, InvalidSnapshotError, SnapshotOrderError } from '../../src/ingest/errors.js';
import { checkArticles, readSnapshotFile } from '../../src/ingest/snapshotReader.js';
import type { ChangesWithdrawnError } from '../../src/ingest/changeFeed.js';
import type { ChangeEventRecord } from '../../src/domain/model.js';
import { Role, type Principal } from '../../src/api/auth.js';
import type { Runtime } from '../../src/app/runtime.js';
import { article, day, execute, ingestOutcome, openTestRuntime, resetKnowledge, runChronoql, testDataDir } from '../support/runtime.js';
import { currentDuplicates, storeFingerprint } from '../support/storeChecks.js';

/** Each of these once left a snapshot INGESTING for good, or let two ingests interleave (issue 11). */
describe('ingest safety', () => {
  let runtime: Runtime;
  // A second runtime has its own driver and lease owner, as another process would.
  let other: Runtime;
  before(async () => {
    runtime = await openTestRuntime();
    other = await openTestRuntime();
  });
  after(async () => {
    await other.close();
    await runtime.close();
  });
  beforeEach(async () => {
    await resetKnowledge(runtime);
  });

  const fingerprint = () => storeFingerprint(runtime.services.db);

  /** The change feed's promise: every sequence number from 1 up to the counter, once each. */
  async function assertGapFreeFeed(): Promise<void> {
    const [{ n, distinct, max, counter }] = await runtime.services.db.run<{ n: number; distinct: number; max: number | null; counter: number }>(
      `MATCH (c:ChangeSequence {name: 'changes'}) OPTIONAL MATCH (e:ChangeEvent)
       RETURN count(e) AS n, count(DISTINCT e.seq) AS distinct, max(e.seq) AS max, c.value AS counter`,
    );
    assert.equal(distinct, n);
    assert.deepEqual([max ?? 0, counter], [n, n], 'seq runs 1..n with no gap, and the counter is at n');
  }

  it('refuses an article id with a lone surrogate before writing, so later snapshots still go in', async () => {
    const raw = [{ value: { id: 'bad\uD800id', text: 'Fine text.', infobox: { 'Lead\uDC00er': 'x', Capital: 'P\uD83Daris' } }, line: 1 }];
    assert.throws(
      () => checkArticles(raw, 'articles'),
      (error: unknown) =>
        error instanceof InvalidSnapshotError &&
        error.problems.some((p) => p.message === '"id" has a lone UTF-16 surrogate at character 4 (not valid Unicode)') &&
        error.problems.some(
          (p) => p.message === 'the "infobox" attribute name "Lead\\udc00er" has a lone UTF-16 surrogate at character 5 (not valid Unicode)',
        ) &&
        error.problems.some((p) => /"infobox"."Capital" has a lone UTF-16 surrogate at character 2/.test(p.message)),
    );
    const { errors, data } = await execute(
      runtime,
      `mutation ($articles: [ArticleInput!]!) { ingestSnapshot(takenAt: "2024-01-01", articles: $articles) { id } }`,
      // As a client's JSON variables carry it ("\\ud800" is valid JSON); GraphQL literals refuse it themselves.
      { articles: JSON.parse('[{"id": "bad\\ud800id", "text": "x."}]') },
    );
    assert.equal(data, null);
    assert.ok(errors?.[0]?.originalError instanceof InvalidSnapshotError, String(errors));
    assert.equal(await countNodes(runtime.services.db, 'Snapshot'), 0);
    // A proper surrogate pair (an emoji) is valid Unicode and goes in unchanged.
    const ok = await runtime.services.ingest.ingest([article('smile 😀', 'A smile 😀.')], { takenAt: day('2024-02-01'), source: 'test' });
    assert.equal(ok.snapshot.status, 'COMPLETE');
    const { data: stored } = await execute(runtime, `{ article(id: "smile 😀") { id } }`);
    assert.equal(stored.article.id, 'smile 😀');
  });

  it('refuses an id or an attribute name with an invisible character, naming it and where it is ("France\\u200b" became a second France)', async () => {
    await runtime.services.ingest.ingest([article('France', 'France is a country.')], { takenAt: day('2024-01-01'), source: 'test' });
    const { errors, data } = await execute(
      runtime,
      `mutation ($articles: [ArticleInput!]!) { ingestSnapshot(takenAt: "2024-02-01", articles: $articles) { id } }`,
      {
        articles: [
          { id: 'France\u200b', text: 'A lookalike.' },
          { id: 'Spain', text: 'Fine.', infobox: [{ attribute: 'Capital\u00ad', value: 'Madrid' }] },
        ],
      },
    );
    assert.equal(data, null);
    const refused = errors?.[0]?.originalError;
    assert.ok(refused instanceof InvalidSnapshotError, String(errors));
    assert.deepEqual(
      refused.problems.map((p) => `${p.line}: ${p.message}`),
      [
        '1: "id" has an invisible character, U+200B, at character 7: names must be visible throughout',
        '2: the "infobox" attribute name "Capital\\u00ad" has an invisible character, U+00AD, at character 8: names must be visible throughout',
      ],
    );
    assert.equal(await countNodes(runtime.services.db, 'Article'), 1);
  });

  it('refuses a snapshot dated far in the future, which would block every later one', async () => {
    await assert.rejects(
      runtime.services.ingest.ingest([article('a', 'x.')], { takenAt: day('9999-12-31'), source: 'test' }),
      (error: unknown) => error instanceof RangeError && /takenAt 9999-12-31T00:00:00.000Z is in the future/.test(error.message),
    );
    assert.equal(await countNodes(runtime.services.db, 'Snapshot'), 0);
    const report = await runtime.services.ingest.ingest([article('a', 'y.')], { takenAt: day('2025-01-01'), source: 'test' });
    assert.equal(report.snapshot.status, 'COMPLETE');
  });

  it('takes two snapshots of one calendar day with changed text', async () => {
    const morning = await runtime.services.ingest.ingest([article('a', 'Paris is the capital. It is big.', { Capital: 'Paris' })], {
      takenAt: new Date('2024-03-01T08:00:00Z'),
      source: 'test',
    });
    const evening = await runtime.services.ingest.ingest([article('a', 'Lyon is the capital. It is big.', { Capital: 'Lyon' })], {
      takenAt: new Date('2024-03-01T20:00:00Z'),
      source: 'test',
    });
    assert.equal(morning.snapshot.id, '2024-03-01T08:00:00.000Z');
    assert.equal(evening.snapshot.status, 'COMPLETE');
    assert.equal(evening.facts.updated, 1);
    const { data } = await execute(
      runtime,
      `{ noon: fact(subject: "a", attribute: "Capital", asOf: "2024-03-01T12:00:00Z") { value }
         night: fact(subject: "a", attribute: "Capital", asOf: "2024-03-01T21:00:00Z") { value } }`,
    );
    assert.deepEqual(data, { noon: { value: 'Paris' }, night: { value: 'Lyon' } });
    assert.deepEqual(await currentDuplicates(runtime.services.db), { facts: 0, sentences: 0 });
  });

  it('plans each batch from what the batches before it committed, also one naming an article of the batch being written', async () => {
    const ingest = (articles: ReturnType<typeof article>[], iso: string) =>
      runtime.services.ingest.ingest(articles, { takenAt: day(iso), source: 'test', batchSize: 1 });
    await ingest(
      [article('a', 'A is old.', { Owner: 'x' }), article('b', 'B is old.', { Owner: 'x' }), article('c', 'C is old.', { Owner: 'x' })],
      '2024-01-01',
    );
    // The next batch is planned while one is written; "b" a second time must wait for the first "b" to commit.
    const report = await ingest(
      [
        article('a', 'A is new.', { Owner: 'y' }),
        article('b', 'B is new.', { Owner: 'y' }),
        article('b', 'B again.', { Owner: 'z' }),
        article('c', 'C is new.', { Owner: 'y' }),
      ],
      '2024-02-01',
    );
    assert.deepEqual([report.facts.updated, report.articlesResumed], [3, 1]);
    assert.deepEqual(await currentDuplicates(runtime.services.db), { facts: 0, sentences: 0 });
    const { data } = await execute(runtime, `{ a: fact(subject: "a", attribute: "Owner") { value } b: fact(subject: "b", attribute: "Owner") { value } }`);
    assert.deepEqual(data, { a: { value: 'y' }, b: { value: 'y' } });
  });

  it('reports an ingest that finished between its two reads (snapshot, then lease) as COMPLETE, not interrupted', async () => {
    const report = await runtime.services.ingest.ingest([article('a', 'x.')], { takenAt: day('2024-01-01'), source: 'test' });
    // What a reader saw before the ingest finished and released its lease.
    const seenWhileWriting = { ...report.snapshot, status: 'INGESTING' as typeof report.snapshot.status };
    const outcome = await runtime.services.ingest.withOutcome(seenWhileWriting);
    assert.deepEqual([outcome.status, outcome.failure ?? null], ['COMPLETE', null]);
  });

  it('runs ingests from two processes one at a time, in date order', async () => {
    const snapshot = (word: string) =>
      Array.from({ length: 120 }, (_, i) => article(`art${i}`, `${word} leads ${i}. A fixed part.`, { Leader: `${word} ${i}` }));
    const outcomes = await Promise.allSettled([
      runtime.services.ingest.ingest(snapshot('Alpha'), { takenAt: day('2024-05-01'), source: 'p1', batchSize: 10, leaseWaitMs: 60_000 }),
      other.services.ingest.ingest(snapshot('Beta'), { takenAt: day('2024-06-01'), source: 'p2', batchSize: 10, leaseWaitMs: 60_000 }),
    ]);
    // Whichever ran first, the other ran after it finished: May then June both go in; June first refuses May.
    const [may, june] = outcomes;
    assert.equal(june.status, 'fulfilled');
    if (may.status === 'rejected') assert.ok(may.reason instanceof SnapshotOrderError, String(may.reason));
    assert.deepEqual(await currentDuplicates(runtime.services.db), { facts: 0, sentences: 0 });
    const { data } = await execute(runtime, `{ snapshots { status } fact(subject: "art7", attribute: "Leader") { value } }`);
    assert.ok(data.snapshots.every((s: { status: string }) => s.status === 'COMPLETE'));
    assert.equal(data.fact.value, 'Beta 7');
  });

  it('gives a free lease to exactly one of many processes asking at once', async () => {
    // The node exists and is free (released), the case where reading before locking let several win.
    await new LeaseRepository(runtime.services.db).acquire('ingest', 'setup', 1);
    for (let round = 0; round < 10; round++) {
      await runtime.services.db.run(`MATCH (l:Lease {name: 'ingest'}) REMOVE l.owner, l.until`);
      const [a, b] = [new LeaseRepository(runtime.services.db), new LeaseRepository(other.services.db)];
      const held = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).acquire('ingest', `owner-${round}-${i}`, 30)));
      assert.equal(held.filter(Boolean).length, 1, `round ${round}: ${held}`);
    }
    await runtime.services.db.run(`MATCH (l:Lease {name: 'ingest'}) DETACH DELETE l`);
  });

  it('refuses at once while another ingest holds the lease, and takes over a lease its dead holder left', async () => {
    const leases = new LeaseRepository(runtime.services.db);
    assert.equal(await leases.acquire('ingest', 'killed-process', 2), true);
    await assert.rejects(
      other.services.ingest.ingest([article('a', 'x.')], { takenAt: day('2024-01-01'), source: 'test' }),
      (error: unknown) => error instanceof IngestBusyError && /another ingest \(killed-process\)/.test(error.message),
    );
    assert.equal(await countNodes(runtime.services.db, 'Snapshot'), 0);
    const report = await other.services.ingest.ingest([article('a', 'x.')], { takenAt: day('2024-01-01'), source: 'test', leaseWaitMs: 10_000 });
    assert.equal(report.snapshot.status, 'COMPLETE');
    assert.equal(await leases.holder('ingest'), null);
  });

  it('ends, after a SIGKILL mid-snapshot and a re-run, with the graph an uninterrupted ingest gives', { timeout: 300_000 }, async () => {
    // Three batches of 100: the kill lands after the first is committed and well before the last.
    const first = Array.from({ length: 300 }, (_, i) => article(`k${i}`, `Item ${i} is small. It stays.`, { Size: String(i) }));
    const second = first.map((a, i) => article(a.id, `Item ${i} is large. It stays. It grew.`, { Size: String(2 * i) }));
    await runtime.services.ingest.ingest(first, { takenAt: day('2024-01-01'), source: 'test' });
    await runtime.services.ingest.ingest(second, { takenAt: day('2024-02-01'), source: 'cli' });
    const uninterrupted = await fingerprint();

    await resetKnowledge(runtime);
    await runtime.services.ingest.ingest(first, { takenAt: day('2024-01-01'), source: 'test' });
    const scratch = mkdtempSync(join(tmpdir(), 'chronoql-kill-'));
    const file = join(scratch, 'second.jsonl');
    writeFileSync(file, second.map((a) => JSON.stringify(a)).join('\n') + '\n');
    const cli = runChronoql(['ingest', file, '--taken-at', '2024-02-01'], { CHRONOQL_DATA_DIR: testDataDir });
    for (;;) {
      const [{ written }] = await runtime.services.db.run<{ written: number }>(`MATCH (e:ChangeEvent {snapshotId: '2024-02-01'}) RETURN count(e) AS written`);
      if (written > 0) break;
      assert.equal(cli.child.exitCode, null, 'the CLI is still running');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    cli.child.kill('SIGKILL');
    assert.equal((await cli.finished).code, null);
    rmSync(scratch, { recursive: true, force: true });
    // Nobody writes it any more: a client is told so, and how to resume (it was INGESTING for good).
    const { data } = await execute(runtime, '{ snapshots { id status failure { code } } }');
    assert.deepEqual(data.snapshots.at(-1), { id: '2024-02-01', status: 'FAILED', failure: { code: 'INGEST_INTERRUPTED' } }, 'killed mid-snapshot');

    // The dead process's lease is taken over at once, not after it runs out (30 s): within the
    // 5 s this re-run may wait, and its first batch follows (the rest of the ingest is not timed).
    const started = performance.now();
    let firstBatchAfterMs: number | null = null;
    const resumed = await runtime.services.ingest.ingest(second, {
      takenAt: day('2024-02-01'),
      source: 'cli',
      leaseWaitMs: 5_000,
      onProgress: () => (firstBatchAfterMs ??= performance.now() - started),
    });
    assert.ok(firstBatchAfterMs !== null && firstBatchAfterMs < 20_000, `first batch ${firstBatchAfterMs} ms after the re-run began`);
    assert.ok(resumed.articlesResumed > 0 && resumed.articlesResumed < first.length, `resumed ${resumed.articlesResumed}`);
    assert.deepEqual(await fingerprint(), uninterrupted);
  });

  it('refuses an oversized id, title, infobox or article up front, with INVALID_SNAPSHOT and its line', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'chronoql-sizes-'));
    const file = join(scratch, 'oversized.jsonl');
    const lines = [
      { id: 'fine', text: 'A fine article.' },
      { id: 'x'.repeat(9000), text: 'Its id is too long to index.' },
      { id: 'long title', title: 't'.repeat(9000), text: 'Its title is too long to index.' },
      { id: 'huge infobox', text: 'Too many facts.', infobox: Object.fromEntries(Array.from({ length: 250_000 }, (_, i) => [`attribute ${i}`, `value ${i}`])) },
      { id: 'one huge line', text: 'Words go on and on. '.repeat(150_000) },
    ];
    writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
    try {
      const error = await readSnapshotFile(file).then(
        () => null,
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof InvalidSnapshotError, `refused before writing: ${String(error)}`);
      assert.equal(error.code, 'INVALID_SNAPSHOT');
      const found = error.problems.map((p) => `${p.source}:${p.line}: ${p.message}`);
      const expected = [
        /^oversized\.jsonl:2: "id" is 9,000 bytes of UTF-8; at most 2,048 are allowed$/,
        /^oversized\.jsonl:3: "title" is 9,000 bytes of UTF-8; at most 2,048 are allowed$/,
        /^oversized\.jsonl:4: "infobox" has 250,000 entries; at most 1,000 are allowed$/,
        /^oversized\.jsonl:4: the article is [\d,.]+ KiB; at most 2,048 KiB \(id, title, text and infobox together\) are allowed/,
        /^oversized\.jsonl:5: the article is 2,929\.7 KiB; at most 2,048 KiB \(id, title, text and infobox together\) are allowed: split it into several articles$/,
      ];
      assert.equal(found.length, expected.length, found.join('\n'));
      expected.forEach((pattern, i) => assert.match(found[i]!, pattern));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    // The GraphQL mutation checks the same way, and reports the position in the list.
    const { errors } = await execute(runtime, `mutation ($articles: [ArticleInput!]!) { ingestSnapshot(takenAt: "2024-01-01", articles: $articles) { id } }`, {
      articles: [
        { id: 'ok', text: 'Fine.' },
        { id: 'x'.repeat(9000), text: 'Too long an id.' },
      ],
    });
    const refused = errors?.[0]?.originalError;
    assert.ok(refused instanceof InvalidSnapshotError, String(errors));
    assert.deepEqual(
      refused.problems.map((p) => [p.source, p.line]),
      [['articles', 2]],
    );
    assert.equal(await countNodes(runtime.services.db, 'Snapshot'), 0);
    const later = await runtime.services.ingest.ingest([article('a', 'Still open to writers.')], { takenAt: day('2024-02-01'), source: 'test' });
    assert.equal(later.snapshot.status, 'COMPLETE');
  });

  /** 300 articles, with text, facts and titles that change from one snapshot to the next. */
  const versionOf = (word: string, count = 120) =>
    Array.from({ length: count }, (_, i) => ({
      id: `r${i}`,
      title: i % 7 === 0 ? `${word} title ${i}` : `r${i}`,
      text: `${word} item ${i}. A fixed part.`,
      infobox: { Leader: `${word} ${i}` },
    }));

  it('rolls back a snapshot Neo4j refuses part-way, so a corrected re-run and later snapshots go in as if it had never been', async () => {
    const january = versionOf('Alpha');
    await runtime.services.ingest.ingest(january, { takenAt: day('2024-01-01'), source: 'test' });
    const onlyJanuary = await fingerprint();
    // Past the size checks (they run on input, not here) comes an id Neo4j cannot index, after two batches committed.
    const february = versionOf('Beta');
    const refused = [...february.slice(0, 100), article('x'.repeat(9000), 'Too long an id to index.'), ...february.slice(100)];
    const committed: number[] = [];
    const error = await runtime.services.ingest
      .ingest(refused, { takenAt: day('2024-02-01'), source: 'test', batchSize: 40, onProgress: (done) => committed.push(done) })
      .then(
        () => null,
        (caught: unknown) => caught,
      );
    assert.deepEqual(committed, [40, 80], 'two batches had committed before Neo4j refused the third');
    assert.equal((error as { code?: string })?.code, 'INGEST_FAILED', `rolled back: ${String(error)}`);
    assert.match(
      (error as Error).message,
      /^snapshot 2024-02-01 could not be written \(Neo4j refused a write: Neo\.\w+\.[\w.]+: Property value is too large to index\); it was rolled back/,
    );
    assert.deepEqual(await fingerprint(), onlyJanuary, 'nothing of the refused snapshot is left');
    await assertGapFreeFeed();
    const { data } = await execute(runtime, '{ snapshot(id: "2024-02-01") { status failure { code message } } snapshots { id } }');
    assert.deepEqual(data.snapshot, { status: 'FAILED', failure: { code: 'INGEST_FAILED', message: (error as Error).message } });
    assert.deepEqual(data.snapshots, [{ id: '2024-01-01' }]);

    // The same date goes in, corrected; then a later snapshot. The graph is that of a run that never failed.
    await runtime.services.ingest.ingest(february, { takenAt: day('2024-02-01'), source: 'test', batchSize: 40 });
    await runtime.services.ingest.ingest(versionOf('Gamma'), { takenAt: day('2024-03-01'), source: 'test' });
    const recovered = await fingerprint();
    await assertGapFreeFeed();
    assert.deepEqual(await currentDuplicates(runtime.services.db), { facts: 0, sentences: 0 });
    await resetKnowledge(runtime);
    await runtime.services.ingest.ingest(january, { takenAt: day('2024-01-01'), source: 'test' });
    await runtime.services.ingest.ingest(february, { takenAt: day('2024-02-01'), source: 'test', batchSize: 40 });
    await runtime.services.ingest.ingest(versionOf('Gamma'), { takenAt: day('2024-03-01'), source: 'test' });
    assert.deepEqual(recovered, await fingerprint());
  });

  it('abandons an interrupted snapshot with `chronoql snapshots abandon`, leaving the graph of a run without it', { timeout: 120_000 }, async () => {
    const help = await runChronoql(['snapshots', 'abandon', '--help'], { CHRONOQL_DATA_DIR: testDataDir }).finished;
    assert.match(help.output.replace(/\s+/g, ' '), /undoes everything the snapshot wrote.*the feed has no gap.*A complete snapshot cannot be abandoned/);
    const january = versionOf('Alpha');
    await runtime.services.ingest.ingest(january, { takenAt: day('2024-01-01'), source: 'test' });
    const onlyJanuary = await fingerprint();
    // A complete snapshot that adds, renames, changes and removes articles, killed just before it was marked COMPLETE.
    const february = [...versionOf('Beta', 100), article('added', 'A new article.', { Kind: 'new' })];
    await runtime.services.ingest.ingest(february, { takenAt: day('2024-02-01'), source: 'test', complete: true });
    await runtime.services.db.run(`MATCH (s:Snapshot {id: '2024-02-01'}) SET s.status = 'INGESTING'`);
    await assert.rejects(
      runtime.services.ingest.ingest(versionOf('Gamma'), { takenAt: day('2024-03-01'), source: 'test' }),
      (error: unknown) =>
        error instanceof SnapshotOrderError && /re-run its ingest to resume it, or discard it with `chronoql snapshots abandon 2024-02-01`/.test(error.message),
    );

    const abandoned = await runChronoql(['snapshots', 'abandon', '2024-02-01'], { CHRONOQL_DATA_DIR: testDataDir }).finished;
    assert.equal(abandoned.code, 0, abandoned.output);
    assert.match(abandoned.output, /abandoned snapshot 2024-02-01: undid 121 articles and deleted \d+ change events/);
    assert.deepEqual(await fingerprint(), onlyJanuary);
    assert.equal((await execute(runtime, '{ snapshot(id: "2024-02-01") { failure { code } } }')).data.snapshot.failure.code, 'INGEST_ABANDONED');
    await assertGapFreeFeed();
    const again = await runChronoql(['snapshots', 'abandon', '2024-01-01'], { CHRONOQL_DATA_DIR: testDataDir }).finished;
    assert.equal(again.code, 1);
    assert.match(again.output, /snapshot 2024-01-01 is COMPLETE; only an interrupted snapshot \(INGESTING\) can be abandoned/);

    await runtime.services.ingest.ingest(versionOf('Gamma'), { takenAt: day('2024-03-01'), source: 'test' });
    const afterAbandon = await fingerprint();
    await resetKnowledge(runtime);
    await runtime.services.ingest.ingest(january, { takenAt: day('2024-01-01'), source: 'test' });
    await runtime.services.ingest.ingest(versionOf('Gamma'), { takenAt: day('2024-03-01'), source: 'test' });
    assert.deepEqual(afterAbandon, await fingerprint());
    assert.deepEqual(await currentDuplicates(runtime.services.db), { facts: 0, sentences: 0 });
  });

  it('finishes a rollback cut short before it writes anything else', async () => {
    const january = versionOf('Alpha', 50);
    await runtime.services.ingest.ingest(january, { takenAt: day('2024-01-01'), source: 'test' });
    const onlyJanuary = await fingerprint();
    await runtime.services.ingest.ingest(versionOf('Beta', 50), { takenAt: day('2024-02-01'), source: 'test' });
    // Killed after the flag and the events went, before the articles were undone.
    await runtime.services.db.run(`MATCH (s:Snapshot {id: '2024-02-01'}) SET s.status = 'INGESTING', s.rollingBack = true`);
    await runtime.services.db.run(`MATCH (e:ChangeEvent {snapshotId: '2024-02-01'}) DETACH DELETE e`);
    await runtime.services.ingest.ingest(january, { takenAt: day('2024-01-01'), source: 'test' });
    assert.deepEqual(await fingerprint(), onlyJanuary);
  });

  it('ends a live subscriber given changes of a snapshot later rolled back with CHANGES_WITHDRAWN, and its resumption has no gap', async () => {
    const live = await openTestRuntime({ changeFeed: true });
    try {
      await live.services.ingest.ingest(versionOf('Alpha', 30), { takenAt: day('2024-01-01'), source: 'test' });
      const [{ january }] = await live.services.db.run<{ january: number }>(`MATCH (e:ChangeEvent) RETURN count(e) AS january`);
      const received: ChangeEventRecord[] = [];
      const subscription = live.services.changeFeed.subscribe({ afterSeq: null });
      const ended = (async () => {
        for await (const event of subscription) received.push(event);
      })().then(
        () => null,
        (error: unknown) => error,
      );
      await live.services.ingest.ingest(versionOf('Beta', 30), { takenAt: day('2024-02-01'), source: 'test' });
      while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      // Killed just before it was marked COMPLETE, then abandoned: the subscriber had been given some of its changes.
      await live.services.db.run(`MATCH (s:Snapshot {id: '2024-02-01'}) SET s.status = 'INGESTING'`);
      await live.services.ingest.abandon('2024-02-01');
      const error = await Promise.race([ended, new Promise((resolve) => setTimeout(() => resolve('still open after 10 s'), 10_000))]);
      const withdrawn = error as ChangesWithdrawnError;
      assert.deepEqual(withdrawn.extensions, { code: 'CHANGES_WITHDRAWN', resumeAfterSeq: january }, String(error));
      // One that was offline meanwhile learns it when it comes back with the last seq it had.
      const offline = await live.services.changeFeed
        .subscribe({ afterSeq: received.at(-1)!.seq })
        .next()
        .then(
          () => null,
          (caught: unknown) => caught,
        );
      assert.deepEqual((offline as ChangesWithdrawnError).extensions, { code: 'CHANGES_WITHDRAWN', resumeAfterSeq: january }, String(offline));

      const resumed: ChangeEventRecord[] = [];
      const again = live.services.changeFeed.subscribe({ afterSeq: withdrawn.extensions.resumeAfterSeq });
      await live.services.ingest.ingest(versionOf('Gamma', 30), { takenAt: day('2024-03-01'), source: 'test' });
      const [{ total }] = await live.services.db.run<{ total: number }>(`MATCH (e:ChangeEvent) RETURN count(e) AS total`);
      for await (const event of again) {
        resumed.push(event);
        if (event.seq === total) break;
      }
      assert.deepEqual(
        resumed.map((event) => event.seq),
        Array.from({ length: total - january }, (_, i) => january + 1 + i),
      );
      assert.ok(resumed.every((event) => event.snapshotId === '2024-03-01'));
    } finally {
      await live.close();
    }
  });

  it("refuses a writer's snapshot dated more than five minutes ahead; an admin may date one up to a day ahead", async () => {
    const ahead = new Date(Date.now() + (23 * 60 + 50) * 60_000);
    const writer: Principal = { subject: 'writer', role: Role.WRITER, via: 'api-key' };
    const { errors } = await execute(
      runtime,
      `mutation ($at: DateTime!) { ingestSnapshot(takenAt: $at, articles: [{id: "a", text: "From tomorrow."}]) { id } }`,
      { at: ahead.toISOString() },
      writer,
    );
    assert.ok(errors?.[0]?.originalError instanceof RangeError, String(errors));
    assert.match(errors[0]!.message, /is in the future \(more than 5 minutes past this server's clock, .*\).*an admin may date one up to a day ahead/);
    assert.equal(await countNodes(runtime.services.db, 'Snapshot'), 0);
    // Within clock skew, a writer's snapshot goes in; an admin's a day ahead too.
    const ask = (query: string, variables: Record<string, unknown>) => execute(runtime, query, variables);
    const skewed = await execute(
      runtime,
      `mutation ($at: DateTime!) { ingestSnapshot(takenAt: $at, articles: [{id: "a", text: "Now."}]) { id status } }`,
      { at: new Date(Date.now() + 2 * 60_000).toISOString() },
      writer,
    );
    assert.equal(skewed.data?.ingestSnapshot.status, 'INGESTING', String(skewed.errors));
    assert.equal((await ingestOutcome(ask, skewed.data.ingestSnapshot.id)).status, 'COMPLETE');
    const admin = await execute(runtime, `mutation ($at: DateTime!) { ingestSnapshot(takenAt: $at, articles: [{id: "a", text: "Tomorrow."}]) { id status } }`, {
      at: ahead.toISOString(),
    });
    assert.equal(admin.data?.ingestSnapshot.status, 'INGESTING', String(admin.errors));
    assert.equal((await ingestOutcome(ask, admin.data.ingestSnapshot.id)).status, 'COMPLETE');
  });

  it('takes the NFC and NFD spellings of one id as one article', async () => {
    const composed = 'Caf\u00e9';
    const decomposed = 'Cafe\u0301';
    const snapshot = (id: string, text: string) => checkArticles([{ value: { id, title: id, text, infobox: { Owner: text } }, line: 1 }], 'articles');
    await runtime.services.ingest.ingest(snapshot(decomposed, 'Old owner.'), { takenAt: day('2024-01-01'), source: 'test' });
    const changed = await runtime.services.ingest.ingest(snapshot(composed, 'New owner.'), { takenAt: day('2024-02-01'), source: 'test' });
    assert.equal(changed.articlesAdded, 0);
    assert.equal(changed.facts.updated, 1);
    assert.equal(await countNodes(runtime.services.db, 'Article'), 1);
    const { data } = await execute(runtime, `{ article(id: "${composed}") { id title } }`);
    assert.deepEqual(data.article, { id: composed, title: composed });
    // Looking it up by the other spelling finds it too.
    const lookedUp = await execute(
      runtime,
      `{ article(id: "${decomposed}") { id } fact(subject: "${decomposed}", attribute: "Owner") { value } factHistory(subject: "${decomposed}", attribute: "Owner") { value } }`,
    );
    assert.deepEqual(lookedUp.data, {
      article: { id: composed },
      fact: { value: 'New owner.' },
      factHistory: [{ value: 'Old owner.' }, { value: 'New owner.' }],
    });
    // Both spellings in one snapshot are one id given twice.
    assert.throws(
      () =>
        checkArticles(
          [
            { value: { id: composed, text: 'x.' }, line: 1 },
            { value: { id: decomposed, text: 'y.' }, line: 2 },
          ],
          'articles',
        ),
      (error: unknown) =>
        error instanceof InvalidSnapshotError && error.problems[0]!.line === 2 && /appears twice \(first at line 1\)/.test(error.problems[0]!.message),
    );
  });
});
