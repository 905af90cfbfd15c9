import neo4j, { type Driver, type ManagedTransaction, type QueryResult, type RecordShape } from 'neo4j-driver';
import { SessionShares, type SessionShareLimits } from './sessionShares.js';

export type Params = Record<string, unknown>;

/** JS numbers travel to Neo4j as floats; counts, limits and sequence numbers must be integers. */
export const int = (value: number): ReturnType<typeof neo4j.int> => neo4j.int(value);

/** Driver codes for a Neo4j that cannot be reached (down, restarting, or no connection free in time). */
const UNREACHABLE_CODES = new Set(['ServiceUnavailable', 'SessionExpired', 'Neo.ClientError.Cluster.NotALeader']);

/** Whether `error` says Neo4j could not be reached, rather than that it refused the work. */
export function isDatabaseUnreachable(error: unknown): boolean {
  return error instanceof neo4j.Neo4jError && (UNREACHABLE_CODES.has(error.code) || /acquisition timed out|Connection acquisition/i.test(error.message));
}

/** Neo4j's status code for an error it raised (Neo.ClientError.…), or null for any other error. */
export function neo4jErrorCode(error: unknown): string | null {
  return error instanceof neo4j.Neo4jError ? error.code : null;
}

/** What a repository needs to run Cypher: a place to read, and one transaction to write in. */
export interface CypherRunner {
  run<R extends RecordShape = RecordShape>(cypher: string, params?: Params): Promise<R[]>;
}

/**
 * The one gateway from ChronoQL to Neo4j. It counts round trips so tests can prove that
 * DataLoaders keep the number of queries constant per request.
 */
export interface DatabaseOptions {
  /** Neo4j aborts a read that runs longer than this. */
  readTimeoutMs?: number;
  /** How many sessions one API caller may hold and how long it waits for one (the total is the pool size). */
  callerShare?: Omit<SessionShareLimits, 'total'>;
}

const POOL_SIZE = 50;
/** An eighth of the pool per caller: a few heavy callers at once still leave room for everyone else. */
export const DEFAULT_CALLER_SESSIONS = 6;
/** How long a caller's Cypher waits for one of its sessions before the request is shed as OVERLOADED. */
export const CALLER_SESSION_WAIT_MS = 5_000;
const DEFAULT_CALLER_SHARE = { perCaller: DEFAULT_CALLER_SESSIONS, waitMs: CALLER_SESSION_WAIT_MS };

/**
 * While Neo4j is down, a request fails within a few seconds instead of waiting for the driver's
 * defaults (a 60 s connection wait, 30 s of retries): opening a connection gives up after 2 s and
 * a transient failure is retried for 1 s. One local server gains little from long retries: a
 * restart takes longer than they would wait. Waiting for a free connection of the pool is no sign
 * of a down server (a batch of 64 questions searches 64 times at once, and a cold full-text index
 * answers its first queries slowly), so that wait is longer.
 */
const FAIL_FAST = { connectionAcquisitionTimeout: 20_000, connectionTimeout: 2_000, maxTransactionRetryTime: 1_000 };

export class Database implements CypherRunner {
  private roundTrips = 0;
  /** Every session is opened through this, so callers share the pool fairly (see SessionShares). */
  readonly sessionShares: SessionShares;

  constructor(
    private readonly driver: Driver,
    private readonly databaseName?: string,
    private readonly options: DatabaseOptions = {},
  ) {
    this.sessionShares = new SessionShares({ total: POOL_SIZE, ...(options.callerShare ?? DEFAULT_CALLER_SHARE) });
  }

  static connect(uri: string, user: string, password: string, databaseName?: string, options: DatabaseOptions = {}): Database {
    const auth = user ? neo4j.auth.basic(user, password) : undefined;
    const driver = neo4j.driver(uri, auth, { disableLosslessIntegers: true, maxConnectionPoolSize: POOL_SIZE, ...FAIL_FAST });
    return new Database(driver, databaseName, options);
  }

  get queryCount(): number {
    return this.roundTrips;
  }

  async verify(): Promise<void> {
    await this.driver.getServerInfo({ database: this.databaseName });
  }

  /**
   * Runs one statement in its own managed transaction (retried on transient errors). A plain
   * session transaction is used rather than executeQuery: its default bookmark manager
   * costs about 3 ms per round trip here, more than the query itself.
   */
  run<R extends RecordShape = RecordShape>(cypher: string, params: Params = {}): Promise<R[]> {
    this.roundTrips += 1;
    return this.sessionShares.use(() => this.runInSession<R>(cypher, params));
  }

  /**
   * The same, for a server's own periodic bookkeeping (shared rate counts), which is not counted
   * as a round trip: the count is what requests cost.
   */
  readonly bookkeeping: CypherRunner = {
    run: <R extends RecordShape = RecordShape>(cypher: string, params: Params = {}): Promise<R[]> =>
      this.sessionShares.use(() => this.runInSession<R>(cypher, params)),
  };

  private async runInSession<R extends RecordShape>(cypher: string, params: Params): Promise<R[]> {
    const write = isWrite(cypher);
    const session = this.driver.session({
      database: this.databaseName,
      defaultAccessMode: write ? neo4j.session.WRITE : neo4j.session.READ,
    });
    try {
      const work = (tx: ManagedTransaction): Promise<QueryResult> => tx.run(cypher, params);
      const result = write ? await session.executeWrite(work) : await session.executeRead(work, { timeout: this.options.readTimeoutMs });
      return result.records.map((record) => record.toObject() as R);
    } finally {
      await session.close();
    }
  }

  /** Runs `work` in one write transaction, retried by the driver on transient errors. */
  writeTransaction<T>(work: (tx: CypherRunner) => Promise<T>): Promise<T> {
    return this.sessionShares.use(() => this.writeInSession(work));
  }

  private async writeInSession<T>(work: (tx: CypherRunner) => Promise<T>): Promise<T> {
    const session = this.driver.session({ database: this.databaseName, defaultAccessMode: neo4j.session.WRITE });
    try {
      return await session.executeWrite((tx) => work(this.transactionRunner(tx)));
    } finally {
      await session.close();
    }
  }

  /** Schema statements cannot share a transaction with data writes, so each runs on its own. */
  async runSchemaStatement(cypher: string): Promise<void> {
    const session = this.driver.session({ database: this.databaseName, defaultAccessMode: neo4j.session.WRITE });
    try {
      await session.run(cypher);
    } finally {
      await session.close();
    }
  }

  async close(): Promise<void> {
    await this.driver.close();
  }

  private transactionRunner(tx: ManagedTransaction): CypherRunner {
    return {
      run: async <R extends RecordShape>(cypher: string, params: Params = {}): Promise<R[]> => {
        this.roundTrips += 1;
        const result: QueryResult = await tx.run(cypher, params);
        return result.records.map((record) => record.toObject() as R);
      },
    };
  }
}

function isWrite(cypher: string): boolean {
  return /\b(CREATE|MERGE|SET|DELETE|REMOVE|DETACH)\b/i.test(cypher);
}
