import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LAUNCHER_CLASS } from './launcherBuild.js';
import { LOCAL_USER, ManagedNeo4jError, type ManagedNeo4jOptions, type Neo4jConnection } from './options.js';
import { boltAnswers, boltUri } from './runningInstance.js';

const DEFAULT_HEAP_MB = 2048;
const DEFAULT_PAGE_CACHE_MB = 512;
/** As long as the launcher's own shutdown deadline (Launcher.SHUTDOWN_DEADLINE), after which it halts. */
const STOP_GRACE_MS = 30_000;
const STDERR_TAIL_LINES = 30;

// Exit codes defined by tools/neo4j Launcher.java.
const EXIT_PORT_IN_USE = 3;
const EXIT_STORE_LOCKED = 4;

export interface LaunchPlan extends ManagedNeo4jOptions {
  neo4jDir: string;
  java: string;
  classpath: string;
  timeoutMs: number;
  log: (msg: string) => void;
}

/**
 * Starts a JVM on `port`, or on a free port when that one is taken and `fixed` is false. A
 * restart keeps its port fixed: the drivers of every process on the data directory point there.
 */
export async function startOnPort(plan: LaunchPlan, port: number | undefined, fixed: boolean): Promise<Instance> {
  if (port !== undefined) {
    const free = await portIsFree(port);
    if (!free && port === plan.boltPort) {
      throw new ManagedNeo4jError(
        `Bolt port ${port} on 127.0.0.1 is already in use, so the managed Neo4j cannot start there. ` +
          'Choose another port, leave it unset to pick a free one, or set NEO4J_URI to use the Neo4j on that port.',
      );
    }
    // A fixed port that is taken fails in the launcher, with the reason, and a restart tries again.
    if (free || fixed) return startInstance(plan, port);
  }
  try {
    return await startInstance(plan, await findFreePort());
  } catch (error) {
    // Another program can grab a free port between our probe and the JVM's bind; one retry
    // with a fresh port covers that race.
    if (error instanceof LaunchExitError && error.exitCode === EXIT_PORT_IN_USE) {
      return startInstance(plan, await findFreePort());
    }
    throw error;
  }
}

/** The launcher refused to start because another Neo4j holds the store. */
export function isStoreLocked(error: unknown): boolean {
  return error instanceof LaunchExitError && error.exitCode === EXIT_STORE_LOCKED;
}

class LaunchExitError extends ManagedNeo4jError {
  constructor(
    message: string,
    readonly exitCode: number | null,
  ) {
    super(message);
  }
}

function jvmArguments(plan: LaunchPlan, port: number): string[] {
  const heapMb = plan.heapMb ?? DEFAULT_HEAP_MB;
  return [
    `-Xmx${heapMb}m`,
    `-Xms${Math.min(256, heapMb)}m`,
    // A JVM that ran out of heap limps along answering nothing; better to die and be restarted.
    '-XX:+ExitOnOutOfMemoryError',
    // The flags Neo4j's own server scripts pass, so its off-heap/IO paths work as designed.
    '--add-opens=java.base/java.nio=ALL-UNNAMED',
    '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
    '--add-opens=java.base/java.io=ALL-UNNAMED',
    '-Dio.netty.tryReflectionSetAccessible=true',
    '-Djdk.nio.maxCachedBufferSize=1024',
    '-Dlog4j2.disable.jmx=true',
    '-cp',
    plan.classpath,
    LAUNCHER_CLASS,
    '--data-dir',
    plan.neo4jDir,
    '--bolt-port',
    String(port),
    '--pagecache-mb',
    String(plan.pageCacheMb ?? DEFAULT_PAGE_CACHE_MB),
    // The JVM watches this pid and shuts itself down when we die, even by SIGKILL.
    '--parent-pid',
    String(process.pid),
  ];
}

/** A JVM this process started: `exited` settles when it ends, for whatever reason. */
export type Instance = Neo4jConnection & { pid: number | undefined; exited: Promise<ExitInfo> };

async function startInstance(plan: LaunchPlan, port: number): Promise<Instance> {
  const uri = boltUri(port);
  const logFile = path.join(plan.neo4jDir, 'logs', 'launcher.log');
  const logStream = openLauncherLog(logFile, plan.log);
  logStream.write(`--- ${new Date().toISOString()} starting Neo4j on ${uri} for pid ${process.pid}\n`);
  plan.log(`Starting the managed Neo4j on ${uri} (data in ${plan.neo4jDir}, log in ${logFile})`);

  const started = Date.now();
  const child = spawn(plan.java, jvmArguments(plan, port), {
    cwd: plan.neo4jDir,
    env: { ...plan.environment, CHRONOQL_NEO4J_PASSWORD: plan.password ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group keeps a terminal Ctrl-C away from the JVM, so the owning
    // process decides the shutdown order (drain requests first, then stop the store).
    detached: true,
    windowsHide: true,
  });
  const stderrTail: string[] = [];
  const exited = trackExit(child);

  try {
    await waitForReady(child, exited, logStream, stderrTail, plan.timeoutMs);
    const remainingMs = Math.max(5_000, plan.timeoutMs - (Date.now() - started));
    if (!(await waitForBolt(uri, remainingMs, exited, plan.password ?? ''))) {
      throw new ManagedNeo4jError(`The managed Neo4j printed READY but ${uri} does not answer Bolt. See ${logFile}.`);
    }
  } catch (error) {
    await terminate(child, exited, 5_000);
    logStream.end();
    if (error instanceof LaunchExitError || error instanceof ManagedNeo4jError) throw error;
    throw new ManagedNeo4jError(`Starting the managed Neo4j failed: ${String(error)}. See ${logFile}.`);
  }

  plan.log(`Managed Neo4j ready on ${uri} after ${((Date.now() - started) / 1000).toFixed(1)} s (pid ${child.pid})`);

  let stopping = false;
  void exited.then(({ code, signal }) => {
    logStream.write(`--- ${new Date().toISOString()} Neo4j exited (code ${code}, signal ${signal})\n`);
    logStream.end();
    if (!stopping) {
      plan.log(
        `The managed Neo4j (pid ${child.pid}) exited unexpectedly (code ${code}, signal ${signal}): ` + `${tail(stderrTail.join('\n'), 5)} See ${logFile}.`,
      );
    }
  });

  // Neither the JVM nor its pipes should keep Node alive: a CLI that forgets stop() still
  // exits, and the JVM notices our exit through --parent-pid and shuts down cleanly.
  child.unref();
  unrefStream(child.stdout);
  unrefStream(child.stderr);

  // On a normal exit without stop(), a synchronous SIGTERM spares the JVM the wait until its
  // parent-pid poll notices; it still checkpoints and releases the store itself.
  const killOnExit = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  process.once('exit', killOnExit);

  let stopPromise: Promise<void> | undefined;
  return {
    uri,
    user: LOCAL_USER,
    password: plan.password ?? '',
    startedHere: true,
    pid: child.pid,
    exited,
    stop: () => {
      stopping = true;
      process.removeListener('exit', killOnExit);
      stopPromise ??= terminate(child, exited, STOP_GRACE_MS);
      return stopPromise;
    },
  };
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  spawnError?: Error;
}

function trackExit(child: ChildProcess): Promise<ExitInfo> {
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, spawnError: error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

function waitForReady(child: ChildProcess, exited: Promise<ExitInfo>, logStream: WriteStream, stderrTail: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let ready = false;
    let stdoutBuffer = '';
    const stderrClosed = new Promise<void>((resolveClosed) => child.stderr?.once('close', () => resolveClosed()));
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      logStream.write(chunk);
      if (ready) return;
      stdoutBuffer += chunk;
      if (/^READY bolt:\/\//m.test(stdoutBuffer)) {
        ready = true;
        stdoutBuffer = '';
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      logStream.write(chunk);
      for (const line of chunk.split('\n')) {
        if (line.trim() === '') continue;
        stderrTail.push(line);
        if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
      }
    });
    const timer = setTimeout(() => {
      reject(new ManagedNeo4jError(`The managed Neo4j did not become ready within ${Math.round(timeoutMs / 1000)} s.` + formatTail(stderrTail)));
    }, timeoutMs);
    void exited.then(({ code, signal, spawnError }) => {
      if (ready) return;
      clearTimeout(timer);
      if (spawnError) {
        reject(new ManagedNeo4jError(`Could not run Java for the managed Neo4j: ${spawnError.message}`));
        return;
      }
      // 'exit' can fire before the pipes are drained; the last stderr line is the reason.
      void Promise.race([stderrClosed, sleep(1_000)]).then(() => reject(launchExitError(code, signal, stderrTail)));
    });
  });
}

function launchExitError(code: number | null, signal: NodeJS.Signals | null, stderrTail: string[]): LaunchExitError {
  const launcherLine = [...stderrTail].reverse().find((line) => line.startsWith('chronoql-neo4j:'));
  const reason = launcherLine?.replace(/^chronoql-neo4j:\s*/, '');
  if (code === EXIT_STORE_LOCKED) {
    return new LaunchExitError(`The managed Neo4j cannot start: ${reason ?? 'its store is locked by another process'}.`, code);
  }
  if (code === EXIT_PORT_IN_USE) {
    return new LaunchExitError(`The managed Neo4j cannot start: ${reason ?? 'its Bolt port is in use'}.`, code);
  }
  return new LaunchExitError(`The managed Neo4j exited before it was ready (code ${code}, signal ${signal}).` + formatTail(stderrTail), code);
}

async function waitForBolt(uri: string, timeoutMs: number, exited: Promise<ExitInfo>, password: string): Promise<boolean> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (!gone && Date.now() < deadline) {
    if (await boltAnswers(uri, 5_000, password)) return true;
    await sleep(250);
  }
  return false;
}

/** SIGTERM lets the launcher checkpoint and release the store; SIGKILL only if it hangs. */
async function terminate(child: ChildProcess, exited: Promise<ExitInfo>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill('SIGTERM');
  const timedOut = Symbol('timeout');
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    exited,
    new Promise<typeof timedOut>((resolve) => {
      timer = setTimeout(() => resolve(timedOut), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (outcome === timedOut) {
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * The JVM's output, appended to its log. A failed write (a full disk) is reported once and the
 * rest of this run's output dropped: an unhandled stream error would take ChronoQL down and
 * orphan the JVM.
 */
function openLauncherLog(file: string, log: (msg: string) => void): WriteStream {
  const stream = createWriteStream(file, { flags: 'a' });
  stream.on('error', (error) => log(`Writing the managed Neo4j's log ${file} failed (${error.message}); its output is not logged until its next start`));
  return stream;
}

function unrefStream(stream: NodeJS.ReadableStream | null): void {
  (stream as unknown as { unref?: () => void } | null)?.unref?.();
}

// ---------------------------------------------------------------------------------------
// Ports

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not determine a free port'))));
    });
  });
}

// ---------------------------------------------------------------------------------------
// Lock files

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function formatTail(lines: string[]): string {
  return lines.length ? `\nLast launcher output:\n${lines.join('\n')}` : '';
}
