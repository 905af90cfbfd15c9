import { promises as fs } from 'node:fs';
import path from 'node:path';
import neo4j from 'neo4j-driver';
import { isProcessAlive } from '../platform/processes.js';
import { LOCAL_USER } from './options.js';

/** What a running launcher leaves in launcher.json, so other processes on the same data directory reuse it. */
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

/**
 * A launcher that serves the store holds its lock, so another JVM started meanwhile only fails: one that
 * is slow to answer (just started, on a loaded machine) is given this long before it counts as hung.
 */
const LIVE_LAUNCHER_ANSWER_MS = 30_000;

export async function findRunningLauncher(neo4jDir: string, password: string): Promise<{ pid: number; uri: string } | undefined> {
  const state = await readLauncherState(neo4jDir);
  // A SIGKILLed JVM leaves its file behind. It is not removed here: the next launcher may be writing its
  // own at this moment, and the dead pid already says enough.
  if (!state || !isProcessAlive(state.pid)) return undefined;
  const uri = boltUri(state.boltPort);
  // A live pid alone is not proof: pids are recycled (then nothing listens and the connection is
  // refused at once), and a hung JVM is no use either.
  return (await boltAnswers(uri, LIVE_LAUNCHER_ANSWER_MS, password)) ? { pid: state.pid, uri } : undefined;
}

export function boltUri(port: number): string {
  return `bolt://127.0.0.1:${port}`;
}

export async function boltAnswers(uri: string, timeoutMs: number, password: string): Promise<boolean> {
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
