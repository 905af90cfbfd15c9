/**
 * The managed local Neo4j: without NEO4J_URI, ChronoQL runs Neo4j Community 5.26 itself,
 * embedded in a small JVM launcher (tools/neo4j) that opens Bolt on 127.0.0.1. Everything
 * else in ChronoQL talks to it through neo4j-driver exactly as it would to a remote server,
 * so this module only decides *which* Bolt URI to hand out and keeps the JVM's lifecycle
 * tied to the process that started it.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { findJava } from './java.js';
import { ensureLauncherBuilt } from './launcherBuild.js';
import { ManagedNeo4jError, type ManagedNeo4jOptions, type Neo4jConnection } from './options.js';
import { superviseManagedNeo4j } from './supervisor.js';

export { ManagedNeo4jError, type ManagedNeo4jOptions, type Neo4jConnection } from './options.js';

const DEFAULT_START_TIMEOUT_MS = 120_000;

const noLog = (): void => {};

/**
 * Returns a Bolt connection to the managed Neo4j for `options.dataDir`, reusing one that
 * another ChronoQL process already runs on the same directory (e.g. `ingest` next to
 * `serve`), and launching the JVM otherwise; either way it is watched and replaced when it
 * dies (see supervisor.ts).
 */
export async function startManagedNeo4j(options: ManagedNeo4jOptions): Promise<Neo4jConnection> {
  validateOptions(options);
  const log = options.log ?? noLog;
  const neo4jDir = path.join(path.resolve(options.dataDir), 'neo4j');
  await fs.mkdir(path.join(neo4jDir, 'logs'), { recursive: true });

  // Java and the launcher build are needed only to start a JVM: using a running one needs neither.
  let launcher: Promise<{ java: string; classpath: string }> | undefined;
  const prepare = (): Promise<{ java: string; classpath: string }> =>
    (launcher ??= (async () => ({ java: await findJava(options.javaHome), classpath: await ensureLauncherBuilt(log) }))());
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  return superviseManagedNeo4j({ ...options, neo4jDir, timeoutMs, log }, prepare);
}

function validateOptions(options: ManagedNeo4jOptions): void {
  const positiveInteger = (value: number | undefined, max: number): boolean => value === undefined || (Number.isInteger(value) && value > 0 && value <= max);
  if (!options.dataDir) throw new ManagedNeo4jError('The managed Neo4j needs a data directory (dataDir).');
  if (!positiveInteger(options.boltPort, 65_535)) {
    throw new ManagedNeo4jError(`Invalid Bolt port ${options.boltPort}: expected an integer from 1 to 65535.`);
  }
  if (!positiveInteger(options.heapMb, 1 << 20) || (options.heapMb !== undefined && options.heapMb < 128)) {
    throw new ManagedNeo4jError(`Invalid Neo4j heap size ${options.heapMb} MiB: expected an integer of at least 128.`);
  }
  if (!positiveInteger(options.pageCacheMb, 1 << 20) || (options.pageCacheMb !== undefined && options.pageCacheMb < 8)) {
    throw new ManagedNeo4jError(`Invalid Neo4j page cache size ${options.pageCacheMb} MiB: expected an integer of at least 8.`);
  }
}
