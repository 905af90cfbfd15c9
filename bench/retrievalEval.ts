import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { factQuestions } from '../src/bench/factQuestions.js';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { projectRoot } from '../src/paths.js';
import { EVALUATED_MODES, evaluateRetrieval, readQaFile, type QaItem, type RetrievalScores } from '../src/retrieval/evaluation.js';
import { machine, openBenchRuntime, writeResult } from './common.js';

/** Retrieval quality per mode on the demo corpus: its fact questions and the paraphrase set. */
export async function runRetrievalEvaluation(): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime();
  try {
    const facts: QaItem[] = [];
    let latest = new Date(0);
    for (const snapshot of await demoSnapshots()) {
      const articles = await readSnapshotFile(snapshot.file);
      await runtime.services.ingest.ingest(articles, { takenAt: snapshot.takenAt, source: 'bench' });
      facts.push(...factQuestions(articles, snapshot.takenAt));
      latest = snapshot.takenAt;
    }
    await runtime.services.retrieval.catchUp();
    const sets: Record<string, QaItem[]> = { 'demo fact questions': facts };
    const paraphrases = join(projectRoot(), 'data', 'eval', 'paraphrase-qa.jsonl');
    if (existsSync(paraphrases)) sets['paraphrase set'] = await readQaFile(paraphrases);
    const results: Record<string, Record<string, RetrievalScores>> = {};
    for (const [name, items] of Object.entries(sets)) {
      results[name] = {};
      for (const mode of EVALUATED_MODES) {
        results[name]![mode] = await evaluateRetrieval(runtime.services.retrieval, items, { mode, defaultAsOf: latest });
      }
    }
    const result = { benchmark: 'retrieval-eval', machine: machine(), embedder: runtime.services.retrieval.embedderId, results };
    await writeResult('retrieval-eval', result);
    return result;
  } finally {
    await runtime.close();
  }
}
