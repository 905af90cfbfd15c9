import { promises as fs } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive } from '../platform/processes.js';
import { ManagedNeo4jError } from './options.js';

/**
 * Runs `work` while holding an exclusive lock file (created with O_EXCL, so only one process
 * can create it). A lock whose owner pid is dead is stale and taken over.
 */
export async function withLockFile<T>(lockPath: string, waitTimeoutMs: number, log: (msg: string) => void, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + waitTimeoutMs;
  let announcedWait = false;
  for (;;) {
    try {
      const handle = await fs.open(lockPath, 'wx');
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, at: new Date().toISOString() }));
      } catch (error) {
        // A full disk: an empty lock would hold everyone off until it looks stale.
        await fs.rm(lockPath, { force: true });
        throw error;
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
        `Timed out waiting for ${lockPath}, held by another ChronoQL process. ` + 'If no other ChronoQL process is running, delete the file and retry.',
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
