import { countNodes, deleteAllKnowledge } from '../src/graph/maintenance.js';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import type { ArticleInput } from '../src/ingest/snapshotReader.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { machine, openBenchRuntime, writeResult } from './common.js';

const SENTENCES_PER_ARTICLE = 20;
const FACTS_PER_ARTICLE = 6;
const TOPICS = ['river', 'parliament', 'observatory', 'railway', 'festival', 'university', 'harbour', 'cathedral'];

/** A deterministic pseudo-random stream, so every run ingests the same corpus. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function sentence(article: number, index: number, variant: number): string {
  const topic = TOPICS[(article + index) % TOPICS.length];
  const revision = variant === 0 ? '' : ` after revision ${variant}`;
  return `The ${topic} of region ${article} was described in record ${index} by Dr. Example in the U.S. in ${1900 + ((article * 7 + index) % 120)}${revision}.`;
}

/** Two snapshots of a synthetic corpus; the second changes `changeRate` of the sentences and some facts. */
export function syntheticSnapshots(articles: number, changeRate: number): [ArticleInput[], ArticleInput[]] {
  const random = seeded(42);
  const first: ArticleInput[] = [];
  const second: ArticleInput[] = [];
  for (let a = 0; a < articles; a += 1) {
    const variants = Array.from({ length: SENTENCES_PER_ARTICLE }, () => (random() < changeRate ? 1 : 0));
    const text = (v: number[]): string =>
      [0, 1, 2, 3]
        .map((p) =>
          v
            .slice(p * 5, p * 5 + 5)
            .map((variant, i) => sentence(a, p * 5 + i, variant))
            .join(' '),
        )
        .join('\n\n');
    const infobox = (changed: boolean): Record<string, string> =>
      Object.fromEntries(Array.from({ length: FACTS_PER_ARTICLE }, (_, f) => [`Attribute ${f}`, `Value ${a}-${f}${changed && f === 0 ? ' (new)' : ''}`]));
    const id = `Synthetic article ${a}`;
    first.push({ id, title: id, text: text(variants.map(() => 0)), infobox: infobox(false) });
    second.push({ id, title: id, text: text(variants), infobox: infobox(random() < changeRate) });
  }
  return [first, second];
}

export async function runIngestBenchmark(options: { articles: number; changeRate: number }): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime();
  try {
    const { db, ingest } = runtime.services;
    const demo: Array<{ snapshot: string; sentences: number; seconds: number }> = [];
    for (const snapshot of await demoSnapshots()) {
      const report = await ingest.ingest(await readSnapshotFile(snapshot.file), { takenAt: snapshot.takenAt, source: 'bench' });
      demo.push({ snapshot: report.snapshot.id, sentences: report.sentences.total, seconds: report.durationMs / 1000 });
    }
    await deleteAllKnowledge(db);

    const [first, second] = syntheticSnapshots(options.articles, options.changeRate);
    const firstReport = await ingest.ingest(first, { takenAt: new Date('2024-01-01T00:00:00Z'), source: 'bench' });
    const sentenceNodesAfterFirst = await countNodes(db, 'Sentence');
    const secondReport = await ingest.ingest(second, { takenAt: new Date('2024-02-01T00:00:00Z'), source: 'bench' });
    const sentenceNodesAfterSecond = await countNodes(db, 'Sentence');
    const demoSentences = demo.reduce((sum, d) => sum + d.sentences, 0);
    const demoSeconds = demo.reduce((sum, d) => sum + d.seconds, 0);
    const result = {
      benchmark: 'ingest',
      machine: machine(),
      demo: { snapshots: demo, sentencesPerSecond: Math.round(demoSentences / demoSeconds) },
      synthetic: {
        articles: options.articles,
        changeRate: options.changeRate,
        first: {
          sentences: firstReport.sentences.total,
          seconds: firstReport.durationMs / 1000,
          sentencesPerSecond: Math.round(firstReport.sentences.total / (firstReport.durationMs / 1000)),
        },
        second: {
          sentences: secondReport.sentences.total,
          labels: {
            unchanged: secondReport.sentences.unchanged,
            changed: secondReport.sentences.changed,
            new: secondReport.sentences.new,
            deleted: secondReport.sentences.deleted,
          },
          seconds: secondReport.durationMs / 1000,
          sentencesPerSecond: Math.round(secondReport.sentences.total / (secondReport.durationMs / 1000)),
          factsUpdated: secondReport.facts.updated,
        },
        sentenceNodesAfterFirst,
        sentenceNodesAfterSecond,
        sentenceNodeGrowthPercent: Number((((sentenceNodesAfterSecond - sentenceNodesAfterFirst) / sentenceNodesAfterFirst) * 100).toFixed(2)),
      },
    };
    await writeResult('ingest', result);
    return result;
  } finally {
    await runtime.close();
  }
}
