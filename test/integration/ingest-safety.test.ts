import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { LeaseRepository } from '../../src/graph/leaseRepository.js';
import { countNodes } from '../../src/graph/maintenance.js';
import { IngestBusyError, InvalidSnapshotError, SnapshotOrderError } from '../../src/ingest/errors.js';
import { checkArticles } from '../../src/ingest/snapshotReader.js';
import type { Runtime } from '../../src/app/runtime.js';
import { article, day, execute, openTestRuntime, resetKnowledge, runChronoql, testDataDir } from '../support/runtime.js';
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

  it('refuses an article id with a lone surrogate before writing, so later snapshots still go in', async () => {
    const raw = [{ value: { id: 'bad\uD800id', text: 'Fine text.', infobox: { 'Lead\uDC00er': 'x', Capital: 'P\uD83Daris' } }, line: 1 }];
    assert.throws(
      () => checkArticles(raw, 'articles'),
      (error: unknown) =>
        error instanceof InvalidSnapshotError &&
        error.problems.some((p) => p.message === '"id" has a lone UTF-16 surrogate at character 4 (not valid Unicode)') &&
        error.problems.some((p) => /an "infobox" attribute name has a lone UTF-16 surrogate at character 5/.test(p.message)) &&
        error.problems.some((p) => /"infobox"."Capital" has a lone UTF-16 surrogate at character 2/.test(p.message)),
    );
    const { errors, data } = await execute(
      runtime,
      `mutation ($articles: [ArticleInput!]!) { ingestSnapshot(takenAt: "2024-01-01", articles: $articles) { articles } }`,
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

  it('runs ingests from two processes one at a time, in date order', async () => {
    const snapshot = (word: string) => Array.from({ length: 120 }, (_, i) => article(`art${i}`, `${word} leads ${i}. A fixed part.`, { Leader: `${word} ${i}` }));
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
    const first = Array.from({ length: 1500 }, (_, i) => article(`k${i}`, `Item ${i} is small. It stays.`, { Size: String(i) }));
    const second = first.map((a, i) => article(a.id, `Item ${i} is large. It stays. It grew.`, { Size: String(2 * i) }));
    const fingerprint = () => storeFingerprint(runtime.services.db);
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
    const { data } = await execute(runtime, '{ snapshots { id status } }');
    assert.deepEqual(data.snapshots.at(-1), { id: '2024-02-01', status: 'INGESTING' }, 'killed mid-snapshot');

    // The dead process's lease is taken over at once: no 30 s wait for it to run out.
    const started = performance.now();
    const resumed = await runtime.services.ingest.ingest(second, { takenAt: day('2024-02-01'), source: 'cli', leaseWaitMs: 5_000 });
    assert.ok(performance.now() - started < 20_000);
    assert.ok(resumed.articlesResumed > 0 && resumed.articlesResumed < 1500, `resumed ${resumed.articlesResumed}`);
    assert.deepEqual(await fingerprint(), uninterrupted);
  });
});
