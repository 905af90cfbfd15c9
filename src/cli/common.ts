/** What every command shares: the configuration, the runtime, progress bars and how failures are told. */
import { writeFile } from 'node:fs/promises';
import { Presets, SingleBar } from 'cli-progress';
import { ConfigError, loadConfig, type Config } from '../app/config.js';
import { openRuntime, type Runtime, type RuntimeOptions } from '../app/runtime.js';
import { neo4jProblem } from '../api/errorReporting.js';
import { InvalidImportError } from '../benchmarks/importShapes.js';
import { EmbedderConfigError } from '../embedding/index.js';
import { IngestBusyError, IngestLeaseLostError, IngestRolledBackError, InvalidSnapshotError, SnapshotOrderError } from '../ingest/errors.js';
import { createLogger, type Logger } from '../platform/logger.js';
import { StorageFullError } from '../platform/diskSpace.js';
import { MavenError } from '../platform/maven.js';
import { EmbedderMismatchError } from '../retrieval/embeddingJob.js';

let config: Config | undefined;

/** The configuration, read when a command first needs it (so `--help` works whatever the environment holds). */
export const cliConfig = (): Config => (config ??= loadConfig());

export const cliLog = (): Logger => createLogger(cliConfig().logLevel);

/** Runs `work` with a runtime built from the configuration, closed afterwards. */
export async function withRuntime<T>(work: (runtime: Runtime) => Promise<T>, options: RuntimeOptions = {}): Promise<T> {
  const runtime = await openRuntime(cliConfig(), cliLog(), options);
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}

export async function withProgress<T>(unit: string, work: (update: (done: number, total: number) => void) => Promise<T>): Promise<T> {
  const bar = new SingleBar({ stream: process.stderr, format: ` {bar} {value}/{total} ${unit} | {eta_formatted} left` }, Presets.shades_classic);
  bar.start(0, 0);
  try {
    return await work((done, total) => {
      bar.setTotal(total);
      bar.update(done);
    });
  } finally {
    bar.stop();
  }
}

/** A benchmark's result: one JSON line with --json, indented otherwise. */
export function printResult(result: unknown, json: boolean | undefined): void {
  process.stdout.write((json ? JSON.stringify(result) : JSON.stringify(result, null, 2)) + '\n');
}

export const writeJson = (file: string, value: unknown): Promise<void> => writeFile(file, JSON.stringify(value, null, 2) + '\n');

/** Tells the user what failed: the message alone for a failure they can act on, the stack otherwise. */
export function fail(error: unknown): never {
  const explained = [
    ConfigError,
    InvalidSnapshotError,
    SnapshotOrderError,
    IngestBusyError,
    IngestLeaseLostError,
    IngestRolledBackError,
    StorageFullError,
    RangeError,
    EmbedderMismatchError,
    EmbedderConfigError,
    MavenError,
    InvalidImportError,
  ];
  const database = neo4jProblem(error);
  if (database) {
    process.stderr.write(`chronoql: ${database.message} (${(error as Error).message}); an interrupted ingest resumes when run again\n`);
  } else if (explained.some((kind) => error instanceof kind)) {
    process.stderr.write(`chronoql: ${(error as Error).message}\n`);
  } else {
    process.stderr.write(`chronoql: ${(error as Error)?.stack ?? String(error)}\n`);
  }
  process.exit(1);
}
