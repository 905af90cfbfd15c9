import { statfs } from 'node:fs/promises';

/**
 * The free space an ingest leaves untouched on the data directory's filesystem by default
 * (CHRONOQL_MIN_FREE_DISK_MB): Neo4j's transaction logs rotate at 64 MiB and two are kept, a
 * checkpoint and a save of the native indexes need room too, and a write that meets a full disk
 * can leave a transaction log that recovery refuses.
 */
export const DEFAULT_MIN_FREE_DISK_MB = 512;

/** Refused before anything is written: there is too little free space on the data directory's filesystem. */
export class StorageFullError extends Error {
  readonly code = 'STORAGE_FULL';

  // The message names no path: /health shows it too.
  constructor(freeBytes: number, minFreeBytes: number) {
    super(
      `only ${mebibytes(freeBytes)} MiB are free on the data directory's filesystem, below the ${mebibytes(minFreeBytes)} MiB ` +
        'an ingest keeps free (CHRONOQL_MIN_FREE_DISK_MB); free some space and retry (nothing written)',
    );
    this.name = 'StorageFullError';
  }
}

export interface DiskSpaceStatus {
  freeBytes: number;
  minFreeBytes: number;
  /** Why writes would be refused; null when there is room. */
  problem: string | null;
}

/** Watches the free space of the filesystem that holds a directory. */
export class DiskSpace {
  constructor(
    readonly directory: string,
    readonly minFreeBytes: number,
  ) {}

  /** Bytes an unprivileged process may still write there. */
  async freeBytes(): Promise<number> {
    const stats = await statfs(this.directory);
    return stats.bavail * stats.bsize;
  }

  async status(): Promise<DiskSpaceStatus> {
    const freeBytes = await this.freeBytes();
    const problem = freeBytes < this.minFreeBytes ? new StorageFullError(freeBytes, this.minFreeBytes).message : null;
    return { freeBytes, minFreeBytes: this.minFreeBytes, problem };
  }

  /** Throws StorageFullError when less than the margin is free. */
  async ensureRoom(): Promise<void> {
    const freeBytes = await this.freeBytes();
    if (freeBytes < this.minFreeBytes) throw new StorageFullError(freeBytes, this.minFreeBytes);
  }
}

/** Bytes as MiB with one decimal, as the free-space messages show them. */
export function mebibytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
