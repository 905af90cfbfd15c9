import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { demoSnapshots } from '../../src/ingest/demoCorpus.js';
import { readSnapshotFile } from '../../src/ingest/snapshotReader.js';
import type { Runtime } from '../../src/app/runtime.js';
import { execute, ingestDemo, openTestRuntime } from '../support/runtime.js';

// In a describe of its own: where files share one process, top-level hooks would be everyone's.
describe('the demo corpus', () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await openTestRuntime();
    await ingestDemo(runtime);
  });
  after(async () => {
    await runtime.close();
  });

  it('ingesting the demo again changes nothing: every snapshot is already there', async () => {
    const before = await execute(runtime, '{ changes(first: 1) { totalCount } }');
    for (const snapshot of await demoSnapshots()) {
      const report = await runtime.services.ingest.ingest(await readSnapshotFile(snapshot.file), { takenAt: snapshot.takenAt, source: snapshot.source });
      assert.equal(report.alreadyIngested, true, snapshot.file);
    }
    const after = await execute(runtime, '{ changes(first: 1) { totalCount } }');
    assert.equal(after.data.changes.totalCount, before.data.changes.totalCount);
  });

  it('holds at least 30 articles over at least 3 snapshots', async () => {
    const { data } = await execute(runtime, '{ snapshots { id status articleCount } articles { totalCount } }');
    assert.ok(data.snapshots.length >= 3);
    assert.ok(data.snapshots.every((s: any) => s.status === 'COMPLETE' && s.articleCount >= 30));
    assert.ok(data.articles.totalCount >= 30);
  });

  it('answers the README examples: the prime minister of France and of Cambodia as of different dates', async () => {
    const { data, errors } = await execute(
      runtime,
      `{
        august: fact(subject: "France", attribute: "Prime Minister", asOf: "2024-08-01") { value }
        october: fact(subject: "France", attribute: "Prime Minister", asOf: "2024-10-01") { value }
        cambodia2023: fact(subject: "Politics of Cambodia", attribute: "Prime Minister", asOf: "2023-07-01") { value }
        cambodia2024: fact(subject: "Politics of Cambodia", attribute: "Prime Minister", asOf: "2024-07-01") { value }
        history: factHistory(subject: "France", attribute: "Prime Minister") { value }
      }`,
    );
    assert.equal(errors, undefined);
    assert.equal(data.august.value, 'Gabriel Attal');
    assert.equal(data.october.value, 'Michel Barnier');
    assert.equal(data.cambodia2023.value, 'Hun Sen');
    assert.equal(data.cambodia2024.value, 'Hun Manet');
    assert.deepEqual(
      data.history.map((f: any) => f.value),
      ['Élisabeth Borne', 'Gabriel Attal', 'Michel Barnier', 'François Bayrou'],
    );
  });

  it('answers the README search example with the passage valid at each date', async () => {
    await runtime.services.retrieval.catchUp();
    const top = async (asOf: string): Promise<string> => {
      const { data, errors } = await execute(
        runtime,
        `{ search(query: "Who is the prime minister of France?", asOf: "${asOf}", k: 3) { text article { id } } }`,
      );
      assert.equal(errors, undefined);
      assert.equal(data.search[0].article.id, 'France');
      return data.search[0].text;
    };
    assert.match(await top('2024-08-01'), /Gabriel Attal has been prime minister/);
    assert.match(await top('2024-10-01'), /Michel Barnier has been prime minister/);
  });

  it('contains every kind of sentence and fact change', async () => {
    const { data } = await execute(
      runtime,
      `{ ${['SENTENCE_NEW', 'SENTENCE_CHANGED', 'SENTENCE_DELETED', 'FACT_NEW', 'FACT_UPDATED', 'FACT_REFINED', 'FACT_REMOVED']
        .map((kind) => `${kind}: changes(kinds: [${kind}], first: 0) { totalCount }`)
        .join(' ')} }`,
    );
    for (const [kind, connection] of Object.entries(data)) {
      assert.ok((connection as { totalCount: number }).totalCount > 0, `no ${kind} change in the demo corpus`);
    }
  });

  it('reads the changes dated in a window: after since, up to and including until', async () => {
    const all = await execute(runtime, `{ changes(first: 500, articleIds: ["France"]) { edges { node { seq at } } } }`);
    const dated = (all.data.changes.edges as Array<{ node: { seq: number; at: string } }>).map((edge) => edge.node);
    const window = await execute(
      runtime,
      `{ changes(first: 500, articleIds: ["France"], since: "2024-07-01", until: "2024-10-01") { totalCount edges { node { seq at } } } }`,
    );
    assert.equal(window.errors, undefined);
    const expected = dated.filter((node) => node.at > '2024-07-01T00:00:00.000Z' && node.at <= '2024-10-01T00:00:00.000Z');
    assert.ok(expected.length > 0 && expected.length < dated.length);
    assert.deepEqual(
      window.data.changes.edges.map((edge: { node: unknown }) => edge.node),
      expected,
    );
    assert.equal(window.data.changes.totalCount, expected.length);
    const reversed = await execute(runtime, `{ changes(since: "2024-10-01", until: "2024-07-01") { totalCount } }`);
    assert.equal(reversed.errors?.[0]?.extensions.code, 'BAD_USER_INPUT');
    assert.match(reversed.errors![0]!.message, /since \(2024-10-01T00:00:00.000Z\) must be before until/);
  });
});
