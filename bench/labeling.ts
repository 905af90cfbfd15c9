/**
 * Sentence labeling throughput (sentences/s of the new snapshot) of the exact-match and
 * GrowOVER labelers on the synthetic bench corpus (most sentences unchanged), on the demo
 * corpus and on the held-out controlled edits of SQuAD paragraphs (every article edited), with
 * the share of GrowOVER's time spent in the encoder and in the classifier (feature computation
 * included).
 */
import { loadConfig } from '../src/app/config.js';
import { embedTextsWith, GrowOverLabeler } from '../src/ingest/growoverLabeler.js';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { ExactMatchLabeler, type SentenceLabeler } from '../src/ingest/sentenceLabeler.js';
import { splitSentences } from '../src/ingest/sentenceSplitter.js';
import { readSnapshotFile, type ArticleInput } from '../src/ingest/snapshotReader.js';
import { createEmbedder } from '../src/embedding/index.js';
import { join } from 'node:path';
import { controlledEditCases, readParagraphs } from '../eval/controlledEdits.js';
import { projectRoot } from '../src/platform/paths.js';
import { machine, writeResult } from './common.js';
import { syntheticSnapshots } from './ingest.js';

type Pair = { previous: Array<{ id: string; text: string; startsParagraph: boolean }>; current: Array<{ text: string; startsParagraph: boolean }> };

function pairsOf(before: readonly ArticleInput[], after: readonly ArticleInput[]): Pair[] {
  const old = new Map(before.map((article) => [article.id, article]));
  return after.flatMap((article) => {
    const previous = old.get(article.id);
    if (!previous) return [];
    return [{ previous: splitSentences(previous.text).map((s, i) => ({ id: String(i), ...s })), current: splitSentences(article.text) }];
  });
}

async function throughput(labeler: SentenceLabeler, pairs: readonly Pair[]): Promise<{ sentences: number; seconds: number; sentencesPerSecond: number }> {
  const started = performance.now();
  let sentences = 0;
  for (const pair of pairs) {
    await labeler.label(pair.previous, pair.current);
    sentences += pair.current.length;
  }
  const seconds = (performance.now() - started) / 1000;
  return { sentences, seconds: Number(seconds.toFixed(2)), sentencesPerSecond: Math.round(sentences / seconds) };
}

export async function runLabelingBenchmark(options: { articles: number; changeRate: number }): Promise<Record<string, unknown>> {
  const embedder = await createEmbedder(loadConfig().labelEncoder ?? loadConfig().embedder);
  try {
    const [first, second] = syntheticSnapshots(options.articles, options.changeRate);
    const demo = await demoSnapshots();
    const demoPairs: Pair[] = [];
    for (let i = 1; i < demo.length; i++) demoPairs.push(...pairsOf(await readSnapshotFile(demo[i - 1]!.file), await readSnapshotFile(demo[i]!.file)));
    const squad = ['squad-train-pool.jsonl.gz', 'squad-dev-subset.jsonl.gz'].map((file) => join(projectRoot(), 'data', 'squad', file));
    const edited: Pair[] = controlledEditCases(await readParagraphs(squad), 'held-out').map((c) => ({
      previous: c.old.map((text, i) => ({ id: String(i), text, startsParagraph: i === 0 })),
      current: c.new.map((text, i) => ({ text, startsParagraph: i === 0 })),
    }));
    const corpora = { synthetic: pairsOf(first, second), demo: demoPairs, controlledEdits: edited };
    const results: Record<string, unknown> = {};
    for (const [name, pairs] of Object.entries(corpora)) {
      // Warm the encoder and the annotator so the first timed article does not pay for loading them.
      await new GrowOverLabeler({ embed: embedTextsWith(embedder) }).label(pairs[0]!.previous, pairs[0]!.current);
      const exact = await throughput(new ExactMatchLabeler(), pairs);
      const growover = new GrowOverLabeler({ embed: embedTextsWith(embedder) });
      const measured = await throughput(growover, pairs);
      const totalMs = measured.seconds * 1000;
      results[name] = {
        articles: pairs.length,
        exactMatch: exact,
        growover: {
          ...measured,
          groups: growover.cost.groups,
          pairsClassified: growover.cost.pairsClassified,
          encoderShare: Number((growover.cost.embedMs / totalMs).toFixed(3)),
          classifierShare: Number((growover.cost.classifyMs / totalMs).toFixed(3)),
        },
      };
    }
    const result = { benchmark: 'labeling', machine: machine(), embedder: embedder.id, changeRate: options.changeRate, ...results };
    await writeResult('labeling', result);
    return result;
  } finally {
    await embedder.close?.();
  }
}
