import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDateInput } from '../domain/time.js';
import { projectRoot } from '../platform/paths.js';

export interface DemoSnapshot {
  file: string;
  takenAt: Date;
  source: string;
}

/** The snapshots a manifest lists (by default the demo's, data/demo/snapshots.json), oldest first; files are relative to it. */
export async function demoSnapshots(directory = join(projectRoot(), 'data', 'demo'), manifestName = 'snapshots.json'): Promise<DemoSnapshot[]> {
  const manifest = JSON.parse(await readFile(join(directory, manifestName), 'utf8')) as Array<{
    file: string;
    takenAt: string;
    source?: string;
  }>;
  return manifest
    .map((entry) => ({
      file: join(directory, entry.file),
      takenAt: parseDateInput(entry.takenAt, `${manifestName}: takenAt of ${entry.file}`),
      source: entry.source ?? 'demo',
    }))
    .sort((a, b) => a.takenAt.getTime() - b.takenAt.getTime());
}
