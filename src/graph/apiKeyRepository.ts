import type { CypherRunner } from './database.js';
import { fromNeo4jDateTime, requireDate } from './temporal.js';

export interface ApiKeyRecord {
  id: string;
  name: string;
  role: string;
  createdAt: Date;
  revokedAt: Date | null;
}

const KEY_FIELDS = `k {.id, .name, .role, .createdAt, .revokedAt}`;

function toApiKey(row: Record<string, unknown>): ApiKeyRecord {
  return {
    id: row.id as string,
    name: row.name as string,
    role: row.role as string,
    createdAt: requireDate(row.createdAt),
    revokedAt: fromNeo4jDateTime(row.revokedAt),
  };
}

/** API keys, stored by the SHA-256 of the secret: the secret itself is shown once and never stored. */
export class ApiKeyRepository {
  constructor(private readonly db: CypherRunner) {}

  async create(key: { id: string; name: string; role: string; hash: string }): Promise<ApiKeyRecord> {
    const rows = await this.db.run<{ key: Record<string, unknown> }>(
      `CREATE (k:ApiKey {id: $id, name: $name, role: $role, hash: $hash, createdAt: datetime()}) RETURN ${KEY_FIELDS} AS key`,
      key,
    );
    return toApiKey(rows[0]!.key);
  }

  /** The unrevoked key with this hash, if any. */
  async findActiveByHash(hash: string): Promise<ApiKeyRecord | null> {
    const rows = await this.db.run<{ key: Record<string, unknown> }>(`MATCH (k:ApiKey {hash: $hash}) WHERE k.revokedAt IS NULL RETURN ${KEY_FIELDS} AS key`, {
      hash,
    });
    return rows[0] ? toApiKey(rows[0].key) : null;
  }

  /** Whether the key with this id was revoked (a key never stored was not). */
  async isRevoked(id: string): Promise<boolean> {
    const rows = await this.db.run<{ revoked: boolean }>(`MATCH (k:ApiKey {id: $id}) RETURN k.revokedAt IS NOT NULL AS revoked`, { id });
    return rows[0]?.revoked ?? false;
  }

  /** Revokes the key; returns it, or null when no key has this id. Revoking twice keeps the first time. */
  async revoke(id: string): Promise<ApiKeyRecord | null> {
    const rows = await this.db.run<{ key: Record<string, unknown> }>(
      `MATCH (k:ApiKey {id: $id}) SET k.revokedAt = coalesce(k.revokedAt, datetime()) RETURN ${KEY_FIELDS} AS key`,
      { id },
    );
    return rows[0] ? toApiKey(rows[0].key) : null;
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.db.run<{ key: Record<string, unknown> }>(`MATCH (k:ApiKey) RETURN ${KEY_FIELDS} AS key ORDER BY k.createdAt`);
    return rows.map((row) => toApiKey(row.key));
  }
}
