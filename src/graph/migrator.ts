import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../platform/paths.js';
import { int, type Database } from './database.js';

export interface Migration {
  version: number;
  name: string;
  statements: string[];
  checksum: string;
}

export interface MigrationOutcome {
  applied: string[];
  alreadyApplied: string[];
}

const MIGRATION_FILE = /^(\d+)_([\w-]+)\.cypher$/;
/** A claim older than this is taken to belong to a process that died mid-migration. */
const STALE_CLAIM_MS = 5 * 60_000;
const POLL_MS = 250;

export async function loadMigrations(directory = join(projectRoot(), 'migrations')): Promise<Migration[]> {
  const files = (await readdir(directory)).filter((file) => MIGRATION_FILE.test(file)).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const [, version, name] = MIGRATION_FILE.exec(file)!;
    const source = await readFile(join(directory, file), 'utf8');
    migrations.push({
      version: Number(version),
      name: `${version}_${name}`,
      statements: splitStatements(source),
      checksum: createHash('sha256').update(source).digest('hex'),
    });
  }
  const versions = migrations.map((migration) => migration.version);
  if (new Set(versions).size !== versions.length) throw new Error(`duplicate migration numbers in ${directory}`);
  return migrations;
}

export function splitStatements(source: string): string[] {
  const withoutComments = source
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n');
  return withoutComments
    .split(/;\s*(?:\n|$)/)
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);
}

/**
 * Applies pending migrations in order, once each. A migration is claimed by creating its
 * (:Migration) node under a uniqueness constraint, so when two processes migrate at once
 * exactly one runs each file and the other waits for it to finish.
 */
export async function migrate(db: Database, migrations?: Migration[]): Promise<MigrationOutcome> {
  const pending = migrations ?? (await loadMigrations());
  await db.runSchemaStatement('CREATE CONSTRAINT migration_version IF NOT EXISTS FOR (m:Migration) REQUIRE m.version IS UNIQUE');
  const outcome: MigrationOutcome = { applied: [], alreadyApplied: [] };
  for (const migration of pending) {
    if (await claim(db, migration)) {
      for (const statement of migration.statements) await db.runSchemaStatement(statement);
      await db.run(`MATCH (m:Migration {version: $version}) SET m.status = 'applied', m.appliedAt = datetime()`, {
        version: int(migration.version),
      });
      outcome.applied.push(migration.name);
    } else {
      await waitUntilApplied(db, migration);
      outcome.alreadyApplied.push(migration.name);
    }
  }
  return outcome;
}

async function claim(db: Database, migration: Migration): Promise<boolean> {
  const rows = await db.run<{ claimed: boolean; checksum: string }>(
    `MERGE (m:Migration {version: $version})
     ON CREATE SET m.name = $name, m.checksum = $checksum, m.status = 'applying', m.claimedAt = datetime(), m.fresh = true
     WITH m, coalesce(m.fresh, false) AS claimed
     REMOVE m.fresh
     RETURN claimed, m.checksum AS checksum`,
    { version: int(migration.version), name: migration.name, checksum: migration.checksum },
  );
  const { claimed, checksum } = rows[0]!;
  if (!claimed && checksum !== migration.checksum) {
    throw new Error(`migration ${migration.name} was changed after it was applied (checksum differs); add a new numbered file instead`);
  }
  return claimed || (await reclaimStale(db, migration));
}

async function reclaimStale(db: Database, migration: Migration): Promise<boolean> {
  const rows = await db.run<{ version: number }>(
    `MATCH (m:Migration {version: $version, status: 'applying'})
     WHERE m.claimedAt < datetime() - duration({milliseconds: $staleMs})
     SET m.claimedAt = datetime()
     RETURN m.version AS version`,
    { version: int(migration.version), staleMs: int(STALE_CLAIM_MS) },
  );
  return rows.length > 0;
}

async function waitUntilApplied(db: Database, migration: Migration): Promise<void> {
  const deadline = Date.now() + STALE_CLAIM_MS;
  for (;;) {
    const rows = await db.run<{ status: string }>('MATCH (m:Migration {version: $version}) RETURN m.status AS status', {
      version: int(migration.version),
    });
    if (rows[0]?.status === 'applied') return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for another process to apply ${migration.name}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
