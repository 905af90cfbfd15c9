import type { Database } from './database.js';

/**
 * Deletes all knowledge (snapshots, versions, changes) but keeps the schema, the applied
 * migrations and the API keys, and resets the change sequence. For tests and benchmarks that need a clean
 * store; deleting in batches keeps each transaction small.
 */
export async function deleteAllKnowledge(db: Database): Promise<void> {
  for (;;) {
    const rows = await db.run<{ deleted: number }>(
      `MATCH (n) WHERE NOT n:Migration AND NOT n:ChangeSequence AND NOT n:ApiKey
       WITH n LIMIT 20000 DETACH DELETE n RETURN count(*) AS deleted`,
    );
    if ((rows[0]?.deleted ?? 0) === 0) break;
  }
  await db.run(`MATCH (c:ChangeSequence {name: 'changes'}) SET c.value = 0 REMOVE c.highest`);
}

export async function countNodes(db: Database, label: string): Promise<number> {
  if (!/^\w+$/.test(label)) throw new RangeError(`not a label: ${label}`);
  const rows = await db.run<{ total: number }>(`MATCH (n:${label}) RETURN count(n) AS total`);
  return rows[0]?.total ?? 0;
}
