import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Database } from '../src/graph/database.js';
import { loadMigrations, migrate, splitStatements, type Migration } from '../src/graph/migrator.js';
import type { Runtime } from '../src/server/runtime.js';
import { openTestRuntime } from './support.js';

let runtime: Runtime;
before(async () => {
  runtime = await openTestRuntime();
});
after(async () => {
  await runtime.close();
});

it('splits migration files into statements, skipping comments', () => {
  assert.deepEqual(splitStatements('// a comment\nCREATE INDEX a IF NOT EXISTS FOR (n:A) ON (n.x);\n\nCREATE INDEX b IF NOT EXISTS\n  FOR (n:B) ON (n.y);\n'), [
    'CREATE INDEX a IF NOT EXISTS FOR (n:A) ON (n.x)',
    'CREATE INDEX b IF NOT EXISTS\n  FOR (n:B) ON (n.y)',
  ]);
});

it('has applied every migration file once, and re-running applies none', async () => {
  const files = await loadMigrations();
  const outcome = await migrate(runtime.services.db);
  assert.deepEqual(outcome.applied, []);
  assert.deepEqual(outcome.alreadyApplied, files.map((m) => m.name));
  const rows = await runtime.services.db.run<{ version: number; status: string }>(
    'MATCH (m:Migration) WHERE m.version < 900 RETURN m.version AS version, m.status AS status ORDER BY version',
  );
  assert.deepEqual(rows, files.map((m) => ({ version: m.version, status: 'applied' })));
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
