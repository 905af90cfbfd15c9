import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDateInput } from '../graph/temporal.js';
import { projectRoot } from '../paths.js';

export interface DemoSnapshot {
  file: string;
  takenAt: Date;
  source: string;
}

/** The demo snapshots listed in data/demo/snapshots.json, oldest first. */
export async function demoSnapshots(directory = join(projectRoot(), 'data', 'demo')): Promise<DemoSnapshot[]> {
  const manifest = JSON.parse(await readFile(join(directory, 'snapshots.json'), 'utf8')) as Array<{
    file: string;
    takenAt: string;
    source?: string;
  }>;
  return manifest
    .map((entry) => ({
      file: join(directory, entry.file),
      takenAt: parseDateInput(entry.takenAt, `snapshots.json: takenAt of ${entry.file}`),
      source: entry.source ?? 'demo',
    }))
    .sort((a, b) => a.takenAt.getTime() - b.takenAt.getTime());
}
