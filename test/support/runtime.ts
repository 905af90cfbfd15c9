import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { graphql, type ExecutionResult } from 'graphql';
import { deleteAllKnowledge } from '../../src/graph/maintenance.js';
import { projectRoot } from '../../src/platform/paths.js';
import { chronoqlSchema } from '../../src/api/schema.js';
import { Role, type Principal } from '../../src/api/auth.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/logger.js';
import { openRuntime, type Runtime } from '../../src/app/runtime.js';
import { readSnapshotFile, type ArticleInput } from '../../src/ingest/snapshotReader.js';
import { demoSnapshots } from '../../src/ingest/demoCorpus.js';

/**
 * A runtime on the test Neo4j (started by scripts/run-tests.mjs, or a managed one in
 * .chronoql-test when a file is run on its own; never the user's data directory).
 */
export const testDataDir = join(projectRoot(), '.chronoql-test');

export async function openTestRuntime(options: { changeFeed?: boolean; env?: Record<string, string> } = {}): Promise<Runtime> {
  const env = { ...process.env, CHRONOQL_DATA_DIR: testDataDir, ...options.env };
  return openRuntime(loadConfig(env), createLogger('warn'), options);
}

export async function resetKnowledge(runtime: Runtime): Promise<void> {
  await deleteAllKnowledge(runtime.services.db);
}

/** In-process operations run as an admin: access control is tested through the server (test/security.test.ts). */
const TEST_ADMIN: Principal = { subject: 'test', role: Role.ADMIN, via: 'api-key' };

/** Executes a GraphQL operation in-process with a fresh request context, as the server would. */
export async function execute(
  runtime: Runtime,
  source: string,
  variableValues?: Record<string, unknown>,
  principal: Principal | null = TEST_ADMIN,
): Promise<{ data: any; errors?: ExecutionResult['errors'] }> {
  const result = await graphql({ schema: await chronoqlSchema(), source, variableValues, contextValue: runtime.requestContext({ principal }) });
  return { data: JSON.parse(JSON.stringify(result.data ?? null)), errors: result.errors };
}

export function article(id: string, text: string, infobox: Record<string, string> = {}): ArticleInput {
  return { id, title: id, text, infobox };
}

export const day = (iso: string): Date => new Date(`${iso}T00:00:00.000Z`);

/** Empties the store and ingests the demo corpus, snapshot by snapshot. */
export async function ingestDemo(runtime: Runtime): Promise<void> {
  await resetKnowledge(runtime);
  for (const snapshot of await demoSnapshots()) {
    await runtime.services.ingest.ingest(await readSnapshotFile(snapshot.file), { takenAt: snapshot.takenAt, source: snapshot.source });
  }
}

/**
 * Runs `chronoql ARGS` (the build `npm test` just compiled) as a separate process, as a user would in another
 * terminal; `finished` resolves with its exit code (null when killed) and output.
 */
/** A TCP port free on the loopback now, for a server a test starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export function runChronoql(args: string[], env: Record<string, string>): { child: ChildProcess; finished: Promise<{ code: number | null; output: string }> } {
  const child = spawn(process.execPath, [join(projectRoot(), 'bin', 'chronoql.js'), ...args], {
    cwd: projectRoot(),
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, finished: new Promise((resolve) => child.on('exit', (code) => resolve({ code, output }))) };
}

export interface GraphqlResponse {
  status: number;
  headers: Headers;
  body: { data?: any; errors?: Array<{ message: string; extensions: Record<string, any> }> };
}

/** POSTs a GraphQL operation to a running server, as a client would, with an optional bearer token. */
export async function postGraphql(url: string, query: string, options: { token?: string; variables?: Record<string, unknown> } = {}): Promise<GraphqlResponse> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    body: JSON.stringify({ query, variables: options.variables }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as GraphqlResponse['body'] };
}

export interface IngestOutcome {
  id: string;
  status: 'COMPLETE' | 'FAILED';
  searchable: boolean;
  changeCount: number;
  failure: { code: string; message: string } | null;
}

/**
 * What a client of the ingestSnapshot mutation does: asks for the snapshot (through `ask`, over
 * HTTP or in-process) until its ingest has ended, COMPLETE or FAILED; with `searchable`, until a
 * COMPLETE one is also searchable.
 */
export async function ingestOutcome(
  ask: (query: string, variables: Record<string, unknown>) => Promise<{ data?: any }>,
  id: string,
  options: { searchable?: boolean; timeoutMs?: number } = {},
): Promise<IngestOutcome> {
  const started = Date.now();
  for (;;) {
    const { data } = await ask('query($id: ID!) { snapshot(id: $id) { id status searchable changeCount failure { code message } } }', { id });
    const snapshot = data?.snapshot as IngestOutcome | null | undefined;
    if (snapshot?.status === 'FAILED' || (snapshot?.status === 'COMPLETE' && (snapshot.searchable || !options.searchable))) return snapshot;
    if (Date.now() - started > (options.timeoutMs ?? 120_000)) throw new Error(`snapshot ${id} still ${JSON.stringify(snapshot)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether a process with this pid still runs (signal 0 only checks). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
