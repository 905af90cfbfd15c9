/**
 * The managed local Neo4j: without NEO4J_URI, ChronoQL runs Neo4j Community 5.26 itself,
 * embedded in a small JVM launcher (tools/neo4j) that opens Bolt on 127.0.0.1. Everything
 * else in ChronoQL talks to it through neo4j-driver exactly as it would to a remote server,
 * so this module only decides *which* Bolt URI to hand out and keeps the JVM's lifecycle
 * tied to the process that started it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, promises as fs, type WriteStream } from 'node:fs';
import net from 'node:net';
import { promisify } from 'node:util';
import path from 'node:path';
import neo4j from 'neo4j-driver';
import { projectRoot } from '../platform/paths.js';
import { runMaven } from '../platform/maven.js';
import { isProcessAlive } from '../platform/processes.js';

const execFileAsync = promisify(execFile);

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
}

/** A failure the user can act on; the message says what to do. */
export class ManagedNeo4jError extends Error {
  override readonly name = 'ManagedNeo4jError';
}

/** Without a password, auth is off in the launcher (it only listens on loopback) and any credentials pass. */
const LOCAL_USER = 'neo4j';

const DEFAULT_HEAP_MB = 2048;
const DEFAULT_PAGE_CACHE_MB = 512;
const DEFAULT_START_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 30_000;
const STORE_LOCK_WAIT_MS = 30_000;
const MIN_JAVA_MAJOR = 17;
const LAUNCHER_CLASS = 'io.chronoql.neo4j.Launcher';
const STDERR_TAIL_LINES = 30;

// Exit codes defined by tools/neo4j Launcher.java.
const EXIT_PORT_IN_USE = 3;
const EXIT_STORE_LOCKED = 4;

const noLog = (): void => {};

/**
 * Returns a Bolt connection to the managed Neo4j for `options.dataDir`, reusing one that
 * another ChronoQL process already runs on the same directory (e.g. `ingest` next to
 * `serve`), and launching the JVM otherwise.
 */
export async function startManagedNeo4j(options: ManagedNeo4jOptions): Promise<Neo4jConnection> {
  validateOptions(options);
  const log = options.log ?? noLog;
  const neo4jDir = path.join(path.resolve(options.dataDir), 'neo4j');
  await fs.mkdir(path.join(neo4jDir, 'logs'), { recursive: true });

  const password = options.password ?? '';
  const running = await findRunningLauncher(neo4jDir, password);
  if (running) {
    log(`Reusing the managed Neo4j (pid ${running.pid}) at ${running.uri}`);
    return reusedConnection(running.uri, password);
  }

  // Two processes starting on the same dataDir must not both launch: the loser would fail on
  // Neo4j's store lock instead of sharing. Whoever gets the lock starts; the other waits,
  // then finds the launcher.json the winner left and reuses it.
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  return withLockFile(path.join(neo4jDir, 'start.lock'), timeoutMs + 60_000, log, async () => {
    const runningNow = await findRunningLauncher(neo4jDir, password);
    if (runningNow) {
      log(`Reusing the managed Neo4j (pid ${runningNow.pid}) at ${runningNow.uri}`);
      return reusedConnection(runningNow.uri, password);
    }
    const java = await findJava();
    const classpath = await ensureLauncherBuilt(log);
    return launch({ ...options, neo4jDir, java, classpath, timeoutMs, log });
  });
}

function validateOptions(options: ManagedNeo4jOptions): void {
  const positiveInteger = (value: number | undefined, max: number): boolean =>
    value === undefined || (Number.isInteger(value) && value > 0 && value <= max);
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

// ---------------------------------------------------------------------------------------
// Reusing a running launcher

interface LauncherState {
  pid: number;
  boltPort: number;
  startedAt?: string;
}

async function readLauncherState(neo4jDir: string): Promise<LauncherState | undefined> {
  let text: string;
  try {
    text = await fs.readFile(path.join(neo4jDir, 'launcher.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LauncherState>;
    if (Number.isInteger(parsed.pid) && Number.isInteger(parsed.boltPort)) {
      return parsed as LauncherState;
    }
  } catch {
    // The launcher writes it by rename, so garbage means someone else wrote it: ignore.
  }
  return undefined;
}

async function findRunningLauncher(neo4jDir: string, password: string): Promise<{ pid: number; uri: string } | undefined> {
  const state = await readLauncherState(neo4jDir);
  if (!state) return undefined;
  if (!isProcessAlive(state.pid)) {
    // Left behind by a JVM that was SIGKILLed; it would mislead the next reader.
    await fs.rm(path.join(neo4jDir, 'launcher.json'), { force: true });
    return undefined;
  }
  const uri = boltUri(state.boltPort);
  // A live pid alone is not proof: pids are recycled, and a hung JVM is no use either.
  return (await boltAnswers(uri, 3_000, password)) ? { pid: state.pid, uri } : undefined;
}

function reusedConnection(uri: string, password: string): Neo4jConnection {
  return { uri, user: LOCAL_USER, password, startedHere: false, stop: async () => {} };
}

function boltUri(port: number): string {
  return `bolt://127.0.0.1:${port}`;
}

async function boltAnswers(uri: string, timeoutMs: number, password: string): Promise<boolean> {
  const driver = neo4j.driver(uri, neo4j.auth.basic(LOCAL_USER, password), {
    connectionTimeout: timeoutMs,
    connectionAcquisitionTimeout: timeoutMs,
    maxConnectionPoolSize: 1,
  });
  try {
    await driver.verifyConnectivity();
    return true;
  } catch {
    return false;
  } finally {
    await driver.close().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------
// Java and the Maven-built launcher

function javaExecutable(): string {
  const javaHome = process.env.JAVA_HOME?.trim();
  if (javaHome) {
    const candidate = path.join(javaHome, 'bin', process.platform === 'win32' ? 'java.exe' : 'java');
    if (existsSync(candidate)) return candidate;
  }
  return 'java';
}

async function findJava(): Promise<string> {
  const java = javaExecutable();
  let versionText: string;
  try {
    // `java -version` reports on stderr.
    versionText = (await execFileAsync(java, ['-version'], { timeout: 30_000, windowsHide: true })).stderr;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ManagedNeo4jError(
        `The managed local Neo4j needs Java ${MIN_JAVA_MAJOR} or newer, but \`${java}\` was not found. ` +
          `Install a JDK ${MIN_JAVA_MAJOR}+ (e.g. \`apt-get install openjdk-17-jdk-headless\`) or set JAVA_HOME, ` +
          'or point ChronoQL at an existing Neo4j 5 server with NEO4J_URI (and NEO4J_USER / NEO4J_PASSWORD).',
      );
    }
    throw error;
  }
  const match = /version "(\d+)(?:\.(\d+))?/.exec(versionText);
  if (match) {
    // Java 8 and earlier report "1.8.0_x".
    const major = match[1] === '1' ? Number(match[2]) : Number(match[1]);
    if (major < MIN_JAVA_MAJOR) {
      throw new ManagedNeo4jError(
        `The managed local Neo4j (Neo4j 5.26) needs Java ${MIN_JAVA_MAJOR} or newer; \`${java}\` is Java ${major}. ` +
          `Install a JDK ${MIN_JAVA_MAJOR}+ and put it first on PATH or in JAVA_HOME, or set NEO4J_URI to use an existing Neo4j.`,
      );
    }
  }
  return java;
}

interface LauncherPaths {
  toolsDir: string;
  targetDir: string;
  classesDir: string;
  libDir: string;
  stampFile: string;
}

function launcherPaths(): LauncherPaths {
  const toolsDir = path.join(projectRoot(), 'tools', 'neo4j');
  const targetDir = path.join(toolsDir, 'target');
  return {
    toolsDir,
    targetDir,
    classesDir: path.join(targetDir, 'classes'),
    libDir: path.join(targetDir, 'lib'),
    stampFile: path.join(targetDir, 'chronoql-build.stamp'),
  };
}

/** Builds the launcher with Maven unless an up-to-date build exists; returns the JVM classpath. */
async function ensureLauncherBuilt(log: (msg: string) => void): Promise<string> {
  const paths = launcherPaths();
  if (!(await buildIsCurrent(paths))) {
    await fs.mkdir(paths.targetDir, { recursive: true });
    // Different data dirs may start at once; Maven writing one target/ twice corrupts it.
    await withLockFile(path.join(paths.targetDir, 'build.lock'), 15 * 60_000, log, async () => {
      if (await buildIsCurrent(paths)) return;
      await buildLauncher(paths, log);
    });
  }
  // Java expands the `*` itself (it is never seen by a shell here).
  return [paths.classesDir, path.join(paths.libDir, '*')].join(path.delimiter);
}

async function buildIsCurrent(paths: LauncherPaths): Promise<boolean> {
  const stamp = await mtimeMs(paths.stampFile);
  if (stamp === undefined) return false;
  if (!existsSync(path.join(paths.classesDir, ...LAUNCHER_CLASS.split('.')) + '.class')) return false;
  const jars = await fs.readdir(paths.libDir).catch(() => [] as string[]);
  if (!jars.some((name) => name.startsWith('neo4j-bolt-'))) return false;
  const newestSource = await newestMtimeMs([path.join(paths.toolsDir, 'pom.xml'), path.join(paths.toolsDir, 'src')]);
  return newestSource <= stamp;
}

async function buildLauncher(paths: LauncherPaths, log: (msg: string) => void): Promise<void> {
  const firstBuild = !existsSync(paths.libDir);
  const stamp = await mtimeMs(paths.stampFile);
  const pomMtime = (await mtimeMs(path.join(paths.toolsDir, 'pom.xml'))) ?? 0;
  // A changed pom.xml may change the Neo4j version. The new jars then go to a fresh directory
  // that replaces lib/ only once Maven succeeded: old and new versions never mix on the
  // classpath, and a failed or offline build leaves the working launcher in place.
  const freshLib = firstBuild || stamp === undefined || pomMtime > stamp;
  const nextLibDir = `${paths.libDir}-next`;
  log(
    firstBuild
      ? 'Building the managed Neo4j launcher (first run: Maven downloads Neo4j 5.26, about 120 MB)...'
      : 'Rebuilding the managed Neo4j launcher (its sources changed)...',
  );
  const started = Date.now();
  const args = ['-f', path.join(paths.toolsDir, 'pom.xml'), 'package'];
  if (freshLib) {
    await fs.rm(nextLibDir, { recursive: true, force: true });
    args.push(`-Dlauncher.lib.dir=${nextLibDir}`);
  }
  try {
    await runMaven(args, { purpose: 'build the managed local Neo4j once', cwd: paths.toolsDir, timeoutMs: 15 * 60_000 });
  } catch (error) {
    throw new ManagedNeo4jError(
      `Building the managed Neo4j launcher failed: ${(error as Error).message}\n` +
        'A JDK 17+ (not just a JRE) is needed too; or set NEO4J_URI (and NEO4J_USER / NEO4J_PASSWORD) to use an existing Neo4j 5 server.',
    );
  }
  if (freshLib) {
    const oldLibDir = `${paths.libDir}-old`;
    await fs.rm(oldLibDir, { recursive: true, force: true });
    if (existsSync(paths.libDir)) await fs.rename(paths.libDir, oldLibDir);
    await fs.rename(nextLibDir, paths.libDir);
    await fs.rm(oldLibDir, { recursive: true, force: true });
  }
  await fs.writeFile(paths.stampFile, `built ${new Date().toISOString()}\n`);
  log(`Built the managed Neo4j launcher in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function mtimeMs(file: string): Promise<number | undefined> {
  try {
    return (await fs.stat(file)).mtimeMs;
  } catch {
    return undefined;
  }
}

async function newestMtimeMs(roots: string[]): Promise<number> {
  let newest = 0;
  for (const root of roots) {
    const stat = await fs.stat(root).catch(() => undefined);
    if (!stat) continue;
    newest = Math.max(newest, stat.mtimeMs);
    if (stat.isDirectory()) {
      const children = await fs.readdir(root);
      newest = Math.max(newest, await newestMtimeMs(children.map((child) => path.join(root, child))));
    }
  }
  return newest;
}

// ---------------------------------------------------------------------------------------
// Launching the JVM

interface LaunchPlan extends ManagedNeo4jOptions {
  neo4jDir: string;
  java: string;
  classpath: string;
  timeoutMs: number;
  log: (msg: string) => void;
}

/**
 * A JVM whose owner just died keeps the store lock for the second or two its shutdown takes,
 * and a restart in that window would fail; so a locked store is retried for a while, and an
 * instance that comes up meanwhile (another process won the race) is reused.
 */
async function launch(plan: LaunchPlan): Promise<Neo4jConnection> {
  const deadline = Date.now() + STORE_LOCK_WAIT_MS;
  for (;;) {
    try {
      return await launchOnFreePort(plan);
    } catch (error) {
      if (!(error instanceof LaunchExitError && error.exitCode === EXIT_STORE_LOCKED) || Date.now() > deadline) throw error;
      plan.log('The Neo4j store is still locked (a previous instance shutting down?); retrying...');
    }
    await sleep(1_000);
    const running = await findRunningLauncher(plan.neo4jDir, plan.password ?? '');
    if (running) {
      plan.log(`Reusing the managed Neo4j (pid ${running.pid}) at ${running.uri}`);
      return reusedConnection(running.uri, plan.password ?? '');
    }
  }
}

async function launchOnFreePort(plan: LaunchPlan): Promise<Neo4jConnection> {
  if (plan.boltPort !== undefined) {
    if (!(await portIsFree(plan.boltPort))) {
      throw new ManagedNeo4jError(
        `Bolt port ${plan.boltPort} on 127.0.0.1 is already in use, so the managed Neo4j cannot start there. ` +
          'Choose another port, leave it unset to pick a free one, or set NEO4J_URI to use the Neo4j on that port.',
      );
    }
    return launchOnPort(plan, plan.boltPort);
  }
  try {
    return await launchOnPort(plan, await findFreePort());
  } catch (error) {
    // Another program can grab a free port between our probe and the JVM's bind; one retry
    // with a fresh port covers that race.
    if (error instanceof LaunchExitError && error.exitCode === EXIT_PORT_IN_USE) {
      return launchOnPort(plan, await findFreePort());
    }
    throw error;
  }
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

/** How long a restart of a Neo4j that died waits at most between attempts (1 s, 2 s, 4 s … up to this). */
const RESTART_MAX_BACKOFF_MS = 30_000;

type Instance = Neo4jConnection & { pid: number | undefined; exited: Promise<ExitInfo> };

async function launchOnPort(plan: LaunchPlan, port: number): Promise<Neo4jConnection> {
  return supervise(plan, port, await startInstance(plan, port));
}

/**
 * Restarts the JVM on the same port whenever it dies unexpectedly (killed, out of memory), with
 * backoff, so the drivers' connections recover without restarting ChronoQL. stop() ends it.
 */
function supervise(plan: LaunchPlan, port: number, first: Instance): Neo4jConnection {
  let current = first;
  let stopped = false;
  // A restart in progress when stop() is called is waited for and stopped too.
  let restarting: Promise<Instance> | undefined;
  const watch = (instance: Instance): void => {
    void instance.exited.then(async () => {
      for (let attempt = 1; !stopped; attempt += 1) {
        await sleep(Math.min(RESTART_MAX_BACKOFF_MS, 1_000 * 2 ** (attempt - 1)));
        if (stopped) return;
        try {
          restarting = startInstance(plan, port);
          const next = await restarting.finally(() => (restarting = undefined));
          if (stopped) return; // stop() stops it: it waited for this restart
          current = next;
          plan.log(`Restarted the managed Neo4j (pid ${next.pid}) on ${next.uri} after ${attempt} attempt(s)`);
          return watch(next);
        } catch (error) {
          plan.log(`Restarting the managed Neo4j failed (attempt ${attempt}): ${(error as Error).message}`);
        }
      }
    });
  };
  watch(first);
  return {
    uri: first.uri,
    user: first.user,
    password: first.password,
    startedHere: true,
    stop: async () => {
      stopped = true;
      const pending = restarting;
      await current.stop();
      if (pending) await pending.then((next) => next.stop(), () => {});
    },
  };
}

async function startInstance(plan: LaunchPlan, port: number): Promise<Instance> {
  const uri = boltUri(port);
  const logFile = path.join(plan.neo4jDir, 'logs', 'launcher.log');
  const logStream = createWriteStream(logFile, { flags: 'a' });
  logStream.write(`--- ${new Date().toISOString()} starting Neo4j on ${uri} for pid ${process.pid}\n`);
  plan.log(`Starting the managed Neo4j on ${uri} (data in ${plan.neo4jDir}, log in ${logFile})`);

  const started = Date.now();
  const child = spawn(plan.java, jvmArguments(plan, port), {
    cwd: plan.neo4jDir,
    env: { ...process.env, CHRONOQL_NEO4J_PASSWORD: plan.password ?? '' },
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
        `The managed Neo4j (pid ${child.pid}) exited unexpectedly (code ${code}, signal ${signal}): ` +
          `${tail(stderrTail.join('\n'), 5)} See ${logFile}.`,
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

interface ExitInfo {
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

function waitForReady(
  child: ChildProcess,
  exited: Promise<ExitInfo>,
  logStream: WriteStream,
  stderrTail: string[],
  timeoutMs: number,
): Promise<void> {
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
      reject(
        new ManagedNeo4jError(
          `The managed Neo4j did not become ready within ${Math.round(timeoutMs / 1000)} s.` + formatTail(stderrTail),
        ),
      );
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
    return new LaunchExitError(
      `The managed Neo4j cannot start: ${reason ?? 'its store is locked by another process'}.`,
      code,
    );
  }
  if (code === EXIT_PORT_IN_USE) {
    return new LaunchExitError(`The managed Neo4j cannot start: ${reason ?? 'its Bolt port is in use'}.`, code);
  }
  return new LaunchExitError(
    `The managed Neo4j exited before it was ready (code ${code}, signal ${signal}).` + formatTail(stderrTail),
    code,
  );
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

/**
 * Runs `work` while holding an exclusive lock file (created with O_EXCL, so only one process
 * can create it). A lock whose owner pid is dead is stale and taken over.
 */
async function withLockFile<T>(
  lockPath: string,
  waitTimeoutMs: number,
  log: (msg: string) => void,
  work: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + waitTimeoutMs;
  let announcedWait = false;
  for (;;) {
    try {
      const handle = await fs.open(lockPath, 'wx');
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, at: new Date().toISOString() }));
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (await lockIsStale(lockPath)) {
      await fs.rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new ManagedNeo4jError(
        `Timed out waiting for ${lockPath}, held by another ChronoQL process. ` +
          'If no other ChronoQL process is running, delete the file and retry.',
      );
    }
    if (!announcedWait) {
      log(`Waiting for another ChronoQL process to finish starting Neo4j (${lockPath})`);
      announcedWait = true;
    }
    await sleep(250);
  }
  try {
    return await work();
  } finally {
    await releaseLock(lockPath);
  }
}

async function lockIsStale(lockPath: string): Promise<boolean> {
  let text: string;
  let modified: number;
  try {
    [text, modified] = await Promise.all([fs.readFile(lockPath, 'utf8'), fs.stat(lockPath).then((s) => s.mtimeMs)]);
  } catch {
    return false; // vanished meanwhile: the next open attempt decides
  }
  try {
    const { pid } = JSON.parse(text) as { pid?: unknown };
    if (typeof pid === 'number') return !isProcessAlive(pid);
  } catch {
    // Empty or partial: the owner may be between creating and writing it.
  }
  return Date.now() - modified > 10_000;
}

async function releaseLock(lockPath: string): Promise<void> {
  try {
    const { pid } = JSON.parse(await fs.readFile(lockPath, 'utf8')) as { pid?: unknown };
    if (pid === process.pid) await fs.rm(lockPath, { force: true });
  } catch {
    // Already gone or replaced; nothing of ours to remove.
  }
}

// ---------------------------------------------------------------------------------------
// Small helpers

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function formatTail(lines: string[]): string {
  return lines.length ? `\nLast launcher output:\n${lines.join('\n')}` : '';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
