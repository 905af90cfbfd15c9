import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { isProcessAlive } from '../platform/processes.js';
import { int, type CypherRunner } from './database.js';
import { requireDate } from './temporal.js';

/** A lease owner for this process: `host:pid:uuid`, so a dead holder on this host can be recognised. */
export function leaseOwner(): string {
  return `${hostname()}:${process.pid}:${randomUUID()}`;
}

/** Whether a lease owner names a process of this host that no longer runs (killed while holding it). */
export function isDeadLocalOwner(owner: string): boolean {
  const [host, pid] = owner.split(':');
  return host === hostname() && /^\d+$/.test(pid ?? '') && !isProcessAlive(Number(pid));
}

/** Store-wide leases: only one process at a time ingests, and only one embeds. */
export type LeaseName = 'ingest' | 'embedding';

export interface LeaseHolder {
  owner: string;
  until: Date;
}

/**
 * Named leases on (:Lease) nodes, under a uniqueness constraint so that processes taking one at
 * once cannot create two. A lease is held until it runs out; its owner renews it while working,
 * so a process that died holding it is replaced when it expires.
 */
export class LeaseRepository {
  constructor(private readonly db: CypherRunner) {}

  /**
   * Takes or renews `name` for `owner` until `seconds` from now, unless another owner holds an
   * unexpired one. Returns whether `owner` holds it. Run inside a write transaction, it also
   * locks the lease node until that transaction ends.
   */
  async acquire(name: LeaseName, owner: string, seconds: number): Promise<boolean> {
    const rows = await this.db.run<{ held: boolean }>(
      // SET first: it takes the node's write lock, so the owner read next cannot change under us
      // (MERGE on an existing node locks nothing, and two callers would both see it free).
      `MERGE (l:Lease {name: $name})
       SET l.lockedAt = datetime()
       WITH l, l.owner IS NULL OR l.owner = $owner OR l.until < datetime() AS free
       SET l.owner = CASE WHEN free THEN $owner ELSE l.owner END,
           l.until = CASE WHEN free THEN datetime() + duration({seconds: $seconds}) ELSE l.until END
       RETURN free AS held`,
      { name, owner, seconds: int(seconds) },
    );
    return rows[0]!.held;
  }

  /** Takes `name` from `previousOwner` (known to be dead) for `owner`; false when someone else has it by now. */
  async takeOver(name: LeaseName, owner: string, previousOwner: string, seconds: number): Promise<boolean> {
    const rows = await this.db.run<{ name: string }>(
      `MATCH (l:Lease {name: $name}) WHERE l.owner = $previousOwner
       SET l.owner = $owner, l.until = datetime() + duration({seconds: $seconds})
       RETURN l.name AS name`,
      { name, owner, previousOwner, seconds: int(seconds) },
    );
    return rows.length > 0;
  }

  async release(name: LeaseName, owner: string): Promise<void> {
    await this.db.run(`MATCH (l:Lease {name: $name}) WHERE l.owner = $owner REMOVE l.owner, l.until`, { name, owner });
  }

  async holder(name: LeaseName): Promise<LeaseHolder | null> {
    const rows = await this.db.run<{ owner: string | null; until: unknown }>(
      `MATCH (l:Lease {name: $name}) WHERE l.until >= datetime() RETURN l.owner AS owner, l.until AS until`,
      { name },
    );
    const row = rows[0];
    return row?.owner ? { owner: row.owner, until: requireDate(row.until) } : null;
  }
}
