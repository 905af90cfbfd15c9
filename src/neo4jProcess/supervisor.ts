import { promises as fs } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DiskSpace, mebibytes } from '../platform/diskSpace.js';
import { isProcessAlive } from '../platform/processes.js';
import { isStoreLocked, startOnPort, type LaunchPlan } from './launch.js';
import { withLockFile } from './lockFile.js';
import { LOCAL_USER, ManagedNeo4jError, type Neo4jConnection } from './options.js';
import { findRunningLauncher } from './runningInstance.js';

/**
 * A JVM whose owner just died keeps the store lock for the second or two its shutdown takes
 * (up to its shutdown deadline on a full disk); a start meanwhile is retried this long.
 */
const STORE_LOCK_WAIT_MS = 35_000;
/** How long a restart of a Neo4j that died waits at most between attempts (1 s, 2 s, 4 s … up to this). */
const RESTART_MAX_BACKOFF_MS = 30_000;
/** How often a process using another process's Neo4j checks that it still runs. */
const FOREIGN_POLL_MS = 1_000;
/**
 * A start with less free space than this is not tried. A store a full disk stopped hung in
 * recovery (opening its id files) until the 120 s start timeout, and each retry spawned another
 * JVM; a clean store still started with 1 MiB free, so this refuses only a disk that is all but full.
 */
const MIN_FREE_BYTES_TO_START = 16 * 1024 * 1024;

/** The Neo4j this process uses: one it runs (own), or one another ChronoQL process runs on the same data directory. */
interface Holder {
  uri: string;
  pid: number | undefined;
  own: boolean;
  /** Settles when that Neo4j is gone. */
  gone: Promise<void>;
  /** Stops it if it is ours; else only stops watching it. */
  stop(): Promise<void>;
}

/**
 * One data directory has one Neo4j, whichever ChronoQL process runs it: starts and restarts
 * happen under `<neo4jDir>/start.lock`, and each first looks for a running launcher to use. Every
 * Neo4j on the directory listens on the same Bolt port (kept in `<neo4jDir>/bolt-port`), so when
 * the one in use dies, whoever starts the next (this process, or a CLI that got the lock first)
 * serves every process's drivers again at the same URI.
 */
export async function superviseManagedNeo4j(settings: StartSettings, prepare: () => Promise<{ java: string; classpath: string }>): Promise<Neo4jConnection> {
  const plan: Plan = { ...settings, prepare };
  const first = await acquire(plan, undefined);
  return supervise(plan, first);
}

type StartSettings = Omit<LaunchPlan, 'java' | 'classpath'>;
/** What a start needs; Java and the launcher build are looked for only when this process starts a JVM. */
type Plan = StartSettings & { prepare: () => Promise<{ java: string; classpath: string }> };

function lockPath(plan: Plan): string {
  return path.join(plan.neo4jDir, 'start.lock');
}

function portFile(plan: Plan): string {
  return path.join(plan.neo4jDir, 'bolt-port');
}

async function rememberedPort(plan: Plan): Promise<number | undefined> {
  const port = Number((await fs.readFile(portFile(plan), 'utf8').catch(() => '')).trim());
  return Number.isInteger(port) && port > 0 && port <= 65_535 ? port : undefined;
}

/**
 * Uses the Neo4j that runs on the directory, or starts one under the start lock. `uri` is set on
 * a restart: the drivers of this process point there, so a new JVM must listen on that port.
 */
async function acquire(plan: Plan, uri: string | undefined): Promise<Holder> {
  // Using a running one needs no lock, which a full disk could not even write.
  const running = await findRunning(plan, uri);
  if (running) return running;
  await ensureRoomToStart(plan.neo4jDir);
  return withLockFile(lockPath(plan), plan.timeoutMs + 60_000, plan.log, async () => {
    const deadline = Date.now() + STORE_LOCK_WAIT_MS;
    for (;;) {
      const runningNow = await findRunning(plan, uri);
      if (runningNow) return runningNow;
      const port = uri !== undefined ? Number(new URL(uri).port) : (plan.boltPort ?? (await rememberedPort(plan)));
      try {
        const instance = await startOnPort({ ...plan, ...(await plan.prepare()) }, port, uri !== undefined || plan.boltPort !== undefined);
        // A hint for the next start: a full disk that refuses it only costs a different port.
        await fs.writeFile(portFile(plan), `${new URL(instance.uri).port}\n`).catch(() => {});
        return { uri: instance.uri, pid: instance.pid, own: true, gone: instance.exited.then(() => {}), stop: () => instance.stop() };
      } catch (error) {
        if (!isStoreLocked(error) || Date.now() > deadline) throw error;
        plan.log('The Neo4j store is still locked (a previous instance shutting down, or another starting?); retrying...');
      }
      await sleep(1_000);
    }
  });
}

async function ensureRoomToStart(neo4jDir: string): Promise<void> {
  const freeBytes = await new DiskSpace(neo4jDir, MIN_FREE_BYTES_TO_START).freeBytes();
  if (freeBytes >= MIN_FREE_BYTES_TO_START) return;
  throw new ManagedNeo4jError(
    `Not starting the managed Neo4j: only ${mebibytes(freeBytes)} MiB are free on the filesystem of ${neo4jDir}, and opening its store ` +
      `needs at least ${mebibytes(MIN_FREE_BYTES_TO_START)} MiB. Free some space; a running server retries by itself.`,
  );
}

async function findRunning(plan: Plan, uri: string | undefined): Promise<Holder | undefined> {
  const running = await findRunningLauncher(plan.neo4jDir, plan.password ?? '');
  if (!running) return undefined;
  plan.log(`Using the managed Neo4j of pid ${running.pid} at ${running.uri}`);
  if (uri !== undefined && running.uri !== uri) {
    plan.log(`That Neo4j listens at ${running.uri}, not at ${uri} where this process connects; it connects again once that one stops`);
  }
  return foreign(running.pid, running.uri);
}

/** Another process's Neo4j, watched by its pid (the JVM's: it outlives no owner). */
function foreign(pid: number, uri: string): Holder {
  let timer: NodeJS.Timeout | undefined;
  let stopWatching: () => void = () => {};
  const gone = new Promise<void>((resolve) => {
    stopWatching = () => clearInterval(timer);
    timer = setInterval(() => {
      if (isProcessAlive(pid)) return;
      clearInterval(timer);
      resolve();
    }, FOREIGN_POLL_MS).unref();
  });
  return { uri, pid, own: false, gone, stop: async () => stopWatching() };
}

/**
 * Whenever the Neo4j in use dies (killed, out of memory, its owner gone), takes the start lock at
 * once, before a CLI on the same directory could start a second one, and uses or starts the next,
 * with backoff between failed attempts, so the drivers' connections recover without restarting
 * ChronoQL. stop() ends it.
 */
function supervise(plan: Plan, first: Holder): Neo4jConnection {
  let current = first;
  let stopped = false;
  // A restart in progress when stop() is called is waited for and stopped too.
  let restarting: Promise<Holder> | undefined;
  const watch = (holder: Holder): void => {
    void holder.gone.then(async () => {
      if (stopped) return;
      if (!holder.own) plan.log(`The managed Neo4j of pid ${holder.pid} stopped; this process starts or finds the next one`);
      for (let attempt = 1; !stopped; attempt += 1) {
        try {
          restarting = acquire(plan, first.uri);
          const next = await restarting.finally(() => (restarting = undefined));
          if (stopped) return; // stop() stops it: it waited for this restart
          current = next;
          plan.log(
            next.own
              ? `Restarted the managed Neo4j (pid ${next.pid}) on ${next.uri} after ${attempt} attempt(s)`
              : `Reconnected to the managed Neo4j of pid ${next.pid} on ${next.uri} after ${attempt} attempt(s)`,
          );
          return watch(next);
        } catch (error) {
          plan.log(`Restarting the managed Neo4j failed (attempt ${attempt}): ${(error as Error).message}`);
        }
        // Unref'd: a CLI that stops meanwhile exits without waiting it out.
        await sleep(Math.min(RESTART_MAX_BACKOFF_MS, 1_000 * 2 ** (attempt - 1)), undefined, { ref: false });
      }
    });
  };
  watch(first);
  return {
    uri: first.uri,
    user: LOCAL_USER,
    password: plan.password ?? '',
    startedHere: first.own,
    stop: async () => {
      stopped = true;
      const pending = restarting;
      await current.stop();
      if (pending)
        await pending.then(
          (next) => next.stop(),
          () => {},
        );
    },
  };
}
