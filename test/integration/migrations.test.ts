import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Database } from '../../src/graph/database.js';
import { loadMigrations, migrate, splitStatements, type Migration } from '../../src/graph/migrator.js';
import type { Runtime } from '../../src/app/runtime.js';
import { openTestRuntime } from '../support/runtime.js';

// In a describe of its own: where files share one process, top-level hooks would be everyone's.
describe('migrations', () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await openTestRuntime();
  });
  after(async () => {
    await runtime.close();
  });

  it('splits migration files into statements, skipping comments', () => {
    assert.deepEqual(
      splitStatements('// a comment\nCREATE INDEX a IF NOT EXISTS FOR (n:A) ON (n.x);\n\nCREATE INDEX b IF NOT EXISTS\n  FOR (n:B) ON (n.y);\n'),
      ['CREATE INDEX a IF NOT EXISTS FOR (n:A) ON (n.x)', 'CREATE INDEX b IF NOT EXISTS\n  FOR (n:B) ON (n.y)'],
    );
  });

  it('has applied every migration file once, and re-running applies none', async () => {
    const files = await loadMigrations();
    const outcome = await migrate(runtime.services.db);
    assert.deepEqual(outcome.applied, []);
    assert.deepEqual(
      outcome.alreadyApplied,
      files.map((m) => m.name),
    );
    const rows = await runtime.services.db.run<{ version: number; status: string }>(
      'MATCH (m:Migration) WHERE m.version < 900 RETURN m.version AS version, m.status AS status ORDER BY version',
    );
    assert.deepEqual(
      rows,
      files.map((m) => ({ version: m.version, status: 'applied' })),
    );
  });

  it('lets exactly one of two concurrent processes apply a new migration', async () => {
    const probe: Migration = {
      version: 999,
      name: '999_concurrency_probe',
      statements: ['CREATE INDEX concurrency_probe IF NOT EXISTS FOR (n:ConcurrencyProbe) ON (n.key)'],
      checksum: 'probe',
    };
    const { db } = runtime.services;
    const uri = process.env.NEO4J_URI ?? runtime.neo4j.uri;
    const second = Database.connect(uri, process.env.NEO4J_USER ?? '', process.env.NEO4J_PASSWORD ?? '');
    try {
      const outcomes = await Promise.all([migrate(db, [probe]), migrate(second, [probe])]);
      assert.deepEqual(outcomes.map((o) => o.applied.length).sort(), [0, 1]);
      assert.deepEqual(outcomes.map((o) => o.alreadyApplied.length).sort(), [0, 1]);
      await assert.rejects(migrate(db, [{ ...probe, checksum: 'edited' }]), /was changed after it was applied/);
    } finally {
      await second.close();
      await db.runSchemaStatement('DROP INDEX concurrency_probe IF EXISTS');
      await db.run('MATCH (m:Migration {version: 999}) DELETE m');
    }
  });

  it('migration 009 gives units written before it their search text: title, then text', async () => {
    const { db } = runtime.services;
    const backfill = (await loadMigrations()).find((m) => m.version === 9)!.statements[0]!;
    await db.run(
      `CREATE (a:Article {id: 'migration-probe', title: 'Probe Title'})-[:HAS_PASSAGE]->(:Passage {id: 'migration-probe#p', text: 'Older passage.'}),
              (:Article {id: 'migration-probe-untitled', title: ''})-[:HAS_SENTENCE]->(:Sentence {id: 'migration-probe#s', text: 'Older sentence.'})`,
    );
    try {
      await db.runSchemaStatement(backfill);
      const rows = await db.run<{ id: string; searchText: string }>(
        `MATCH (u) WHERE u.id IN ['migration-probe#p', 'migration-probe#s'] RETURN u.id AS id, u.searchText AS searchText ORDER BY id`,
      );
      assert.deepEqual(rows, [
        { id: 'migration-probe#p', searchText: 'Probe Title\nOlder passage.' },
        { id: 'migration-probe#s', searchText: 'Older sentence.' },
      ]);
    } finally {
      await db.run(`MATCH (a:Article) WHERE a.id STARTS WITH 'migration-probe' DETACH DELETE a`);
      await db.run(`MATCH (u) WHERE u.id STARTS WITH 'migration-probe#' DETACH DELETE u`);
    }
  });
});
