import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { factQuestions } from './factQuestions.js';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { projectRoot } from '../src/platform/paths.js';
import { EVALUATED_MODES, evaluateRetrieval, readQaFile, serviceSearch, type QaItem, type RetrievalScores } from '../eval/qaFile.js';
import type { Runtime } from '../src/app/runtime.js';
import { machine, openBenchRuntime, writeResult } from './common.js';

/** The demo corpus ingested snapshot by snapshot and embedded, with its fact questions and the paraphrase set. */
export async function loadDemoCorpus(runtime: Runtime): Promise<{ facts: QaItem[]; paraphrases: QaItem[]; latest: Date }> {
  const facts: QaItem[] = [];
  let latest = new Date(0);
  for (const snapshot of await demoSnapshots()) {
    const articles = await readSnapshotFile(snapshot.file);
    await runtime.services.ingest.ingest(articles, { takenAt: snapshot.takenAt, source: 'bench' });
    facts.push(...factQuestions(articles, snapshot.takenAt));
    latest = snapshot.takenAt;
  }
  await runtime.services.retrieval.catchUp();
  const paraphrases = join(projectRoot(), 'data', 'eval', 'paraphrase-qa.jsonl');
  return { facts, paraphrases: existsSync(paraphrases) ? await readQaFile(paraphrases) : [], latest };
}

/** Retrieval quality per mode on the demo corpus: its fact questions and the paraphrase set. */
export async function runRetrievalEvaluation(): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime();
  try {
    const { facts, paraphrases, latest } = await loadDemoCorpus(runtime);
    const sets: Record<string, QaItem[]> = { 'demo fact questions': facts };
    if (paraphrases.length > 0) sets['paraphrase set'] = paraphrases;
    const results: Record<string, Record<string, RetrievalScores>> = {};
    for (const [name, items] of Object.entries(sets)) {
      results[name] = {};
      for (const mode of EVALUATED_MODES) {
        results[name]![mode] = await evaluateRetrieval(serviceSearch(runtime.services.retrieval), items, { mode, defaultAsOf: latest });
      }
    }
    const result = { benchmark: 'retrieval-eval', machine: machine(), embedder: runtime.services.retrieval.embedderId, results };
    await writeResult('retrieval-eval', result);
    return result;
  } finally {
    await runtime.close();
  }
}
