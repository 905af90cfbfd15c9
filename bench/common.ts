import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { deleteAllKnowledge } from '../src/graph/maintenance.js';
import { projectRoot } from '../src/platform/paths.js';
import { loadConfig } from '../src/app/config.js';
import { createLogger, type Logger } from '../src/platform/logger.js';
import { openRuntime, type Runtime } from '../src/app/runtime.js';

/**
 * A runtime on a managed Neo4j of its own (.chronoql-bench), emptied first. Benchmarks never
 * touch the NEO4J_URI server or the user's data directory, since they delete everything.
 */
export async function openBenchRuntime(options: { changeFeed?: boolean; benchmark?: boolean; log?: Logger } = {}): Promise<Runtime> {
  // The living benchmark's step after each ingest is measured by its own benchmark, and kept out of the others.
  const env = {
    ...process.env,
    CHRONOQL_DATA_DIR: join(projectRoot(), '.chronoql-bench'),
    NEO4J_URI: '',
    CHRONOQL_BENCHMARK: options.benchmark ? 'local' : 'off',
  };
  const runtime = await openRuntime(loadConfig(env), options.log ?? createLogger('warn'), options);
  await deleteAllKnowledge(runtime.services.db);
  return runtime;
}

export function machine(): Record<string, unknown> {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    date: new Date().toISOString().slice(0, 10),
  };
}

export function percentile(sortedMs: number[], p: number): number {
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[index]!;
}

export async function writeResult(name: string, result: unknown): Promise<void> {
  const directory = join(projectRoot(), 'bench', 'results');
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, `${name}.json`), JSON.stringify(result, null, 2) + '\n');
}
