/**
 * What keeping the living benchmark costs next to the ingest it follows (issue 20): a synthetic
 * corpus whose articles each have one paragraph GrowOVER would draft from (4 sentences,
 * 300–600 characters) and one it would not (5 sentences); the second snapshot changes a year
 * in `changeRate` of the sentences. Reported: each snapshot's ingest time without the
 * benchmark step, and the step's own time (carry-over and retirement, drafting with the
 * round-trip filter), each as a share of the ingest.
 */
import { Writable } from 'node:stream';
import type { MaintenanceReport } from '../src/benchmarks/benchmarkMaintenance.js';
import { countNodes } from '../src/graph/maintenance.js';
import { createLogger } from '../src/platform/logger.js';
import type { ArticleInput } from '../src/ingest/snapshotReader.js';
import { seeded } from './ingest.js';
import { machine, openBenchRuntime, writeResult } from './common.js';

const PLACES = ['harbour', 'observatory', 'railway station', 'cathedral', 'university', 'bridge', 'library', 'theatre'];

function article(index: number, changed: (sentence: number) => boolean): ArticleInput {
  const place = PLACES[index % PLACES.length]!;
  const year = (sentence: number): number => 1800 + ((index * 13 + sentence * 7) % 200) + (changed(sentence) ? 1 : 0);
  const drafted = [
    `The ${place} of Town ${index} was opened by Mayor Anna Berg in ${year(0)} after a long public debate.`,
    `Its first director, Paul Moreau, came from Lyon and served for twenty years until ${year(1)}.`,
    `A fire in ${year(2)} destroyed the east wing, which the architect Clara Stein rebuilt in stone.`,
    `The ${place} now welcomes about ${1000 + index} visitors a month and is run by the Town ${index} council.`,
  ].join(' ');
  const other = [5, 6, 7, 8, 9].map((s) => `Record ${s} of Town ${index} notes a survey of the ${place} in ${year(s)}.`).join(' ');
  return { id: `Town ${index} ${place}`, title: `Town ${index} ${place}`, text: `${drafted}\n\n${other}`, infobox: {} };
}

export async function runBenchmarkMaintenanceBenchmark(options: { articles: number; changeRate: number }): Promise<Record<string, unknown>> {
  // The step reports its own parts ("benchmark maintained" at info); everything else stays at warn.
  const reports: MaintenanceReport[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as MaintenanceReport & { msg?: string; level: number };
        if (entry.msg === 'benchmark maintained') reports.push(entry);
        else if (entry.level >= 40) process.stderr.write(`${line}\n`);
      }
      done();
    },
  });
  const runtime = await openBenchRuntime({ benchmark: true, log: createLogger('info', sink) });
  try {
    const random = seeded(20);
    const changes = Array.from({ length: options.articles }, () => Array.from({ length: 10 }, () => random() < options.changeRate));
    const snapshots = [
      { takenAt: new Date('2024-01-01T00:00:00Z'), articles: changes.map((_, a) => article(a, () => false)) },
      { takenAt: new Date('2024-02-01T00:00:00Z'), articles: changes.map((row, a) => article(a, (s) => row[s]!)) },
    ];
    const measured = [];
    for (const snapshot of snapshots) {
      const report = await runtime.services.ingest.ingest(snapshot.articles, { takenAt: snapshot.takenAt, source: 'bench' });
      const step = reports.find((entry) => entry.snapshotId === report.snapshot.id);
      if (!step) throw new Error(`no benchmark maintenance was reported for ${report.snapshot.id}`);
      const ingestSeconds = report.durationMs / 1000;
      const share = (ms: number): number => Number((ms / report.durationMs).toFixed(3));
      measured.push({
        snapshot: report.snapshot.id,
        sentences: report.sentences,
        ingestSeconds,
        carryOverAndRetireSeconds: step.carryOverMs / 1000,
        draftingSeconds: step.draftingMs / 1000,
        carryOverAndRetireShareOfIngest: share(step.carryOverMs),
        draftingShareOfIngest: share(step.draftingMs),
        stepShareOfIngest: share(step.carryOverMs + step.draftingMs),
        carriedOver: step.carriedOver,
        retired: step.retired,
        draftsTried: step.drafted,
        kept: step.kept,
        benchmarkItemsAfter: await countNodes(runtime.services.db, 'BenchmarkItem'),
      });
    }
    const result = { benchmark: 'benchmark-maintenance', machine: machine(), articles: options.articles, changeRate: options.changeRate, snapshots: measured };
    await writeResult('benchmark-maintenance', result);
    return result;
  } finally {
    await runtime.close();
  }
}
