export interface Neo4jConnection {
  uri: string;
  user: string;
  password: string;
  /** True only when this process launched the JVM; only then does stop() do anything. */
  startedHere: boolean;
  stop(): Promise<void>;
}

export interface ManagedNeo4jOptions {
  /** ChronoQL's data directory; Neo4j keeps its store and logs in `<dataDir>/neo4j`. */
  dataDir: string;
  /** Fixed Bolt port; a free one is picked when omitted. */
  boltPort?: number;
  /** JVM heap ceiling in MiB (default 2048). */
  heapMb?: number;
  /** Neo4j page cache in MiB (default 512). */
  pageCacheMb?: number;
  /** The neo4j user's password; when set, Neo4j requires it (auth on), else auth is off. */
  password?: string;
  /** How long to wait for a cold JVM to accept Bolt connections (default 120 s). */
  startTimeoutMs?: number;
  log?: (msg: string) => void;
  /** Where Java is looked for first; else `java` on the PATH. */
  javaHome?: string;
  /** The environment the JVM inherits (its PATH, locale), given by the caller: ChronoQL reads its environment in one place. */
  environment: Readonly<Record<string, string | undefined>>;
}

/** A failure the user can act on; the message says what to do. */
export class ManagedNeo4jError extends Error {
  override readonly name = 'ManagedNeo4jError';
}

/** Without a password, auth is off in the launcher (it only listens on loopback) and any credentials pass. */
export const LOCAL_USER = 'neo4j';
