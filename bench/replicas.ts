/**
 * One server against two (issue 22): the load benchmark's mix at the same total concurrency,
 * sent to one `chronoql serve`, then spread evenly over two replicas on the same Neo4j.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { projectRoot } from '../src/platform/paths.js';
import { machine, openBenchRuntime, writeResult } from './common.js';
import { ONE_CLIENT_STANDS_FOR_MANY, runTraffic, startServerProcess, stopServerProcess, type TrafficResult } from './load.js';

function combined(runs: TrafficResult[]): Record<string, number> {
  return {
    requests: runs.reduce((total, run) => total + run.requests, 0),
    requestsPerSecond: Number(runs.reduce((total, run) => total + run.requestsPerSecond, 0).toFixed(1)),
    worstP50Ms: Math.max(...runs.map((run) => run.p50Ms)),
    worstP99Ms: Math.max(...runs.map((run) => run.p99Ms)),
    errors: runs.reduce((total, run) => total + run.errors, 0),
  };
}

export async function runReplicasBenchmark(options: { seconds: number; connections: number }): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime();
  const servers: Array<Awaited<ReturnType<typeof startServerProcess>>> = [];
  const scratch = await mkdtemp(join(tmpdir(), 'chronoql-replicas-'));
  try {
    for (const snapshot of await demoSnapshots()) {
      await runtime.services.ingest.ingest(await readSnapshotFile(snapshot.file), { takenAt: snapshot.takenAt, source: snapshot.source });
    }
    await runtime.services.retrieval.catchUp();
    // Both replicas use the bench store's Neo4j (started by openBenchRuntime) through NEO4J_URI, each with its own index directory.
    const { uri } = runtime.neo4j;
    const serve = async (name: string) => {
      const started = await startServerProcess({
        ...ONE_CLIENT_STANDS_FOR_MANY,
        NEO4J_URI: uri,
        CHRONOQL_DATA_DIR: join(scratch, name),
        CHRONOQL_MODELS_DIR: join(projectRoot(), '.chronoql-bench', 'models'),
        PORT: '0',
        LOG_LEVEL: 'warn',
      });
      servers.push(started);
      return started;
    };
    const a = await serve('a');
    await runTraffic(a.url, options.connections, 5); // warm-up
    const one = await runTraffic(a.url, options.connections, options.seconds);
    const b = await serve('b');
    await runTraffic(b.url, options.connections, 5);
    const half = Math.max(1, Math.round(options.connections / 2));
    const two = await Promise.all([runTraffic(a.url, half, options.seconds), runTraffic(b.url, half, options.seconds)]);
    const result = {
      benchmark: 'replicas',
      machine: machine(),
      mix: 'the load benchmark mix (70% fact and as-of reads, 20% ask, 10% factHistory) on the demo corpus; both servers and Neo4j on this one machine',
      totalConnections: options.connections,
      oneServer: one,
      twoServers: { perServer: two, combined: combined(two) },
    };
    await writeResult('replicas', result);
    return result;
  } finally {
    for (const server of servers) await stopServerProcess(server);
    await runtime.close();
    await rm(scratch, { recursive: true, force: true });
  }
}
