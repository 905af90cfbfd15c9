import { join } from 'node:path';
import { deleteAllKnowledge } from '../graph/maintenance.js';
import type { ArticleInput } from '../ingest/snapshotReader.js';
import { loadConfig } from '../server/config.js';
import type { Logger } from '../server/logger.js';
import { openRuntime } from '../server/runtime.js';
import { EVALUATED_MODES, evaluateRetrieval, readQaFile, type QaItem } from './evaluation.js';
import { SearchUnit } from './retrievalService.js';

/** Before any question's date, so a QA set loaded as its own corpus is valid whenever it is asked. */
const CORPUS_DATE = new Date('1970-01-02T00:00:00.000Z');

function table(rows: Array<[string, { questions: number; recallAt1: number; recallAt5: number; recallAt20: number; mrrAt20: number }]>): string {
  const format = (x: number): string => x.toFixed(3);
  return [
    '| mode | questions | Recall@1 | Recall@5 | Recall@20 | MRR@20 |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(([mode, s]) => `| ${mode} | ${s.questions} | ${format(s.recallAt1)} | ${format(s.recallAt5)} | ${format(s.recallAt20)} | ${format(s.mrrAt20)} |`),
  ].join('\n');
}

/**
 * `chronoql eval-retrieval`: scores every search mode on a QA file, against the configured
 * store, or (contexts as corpus) against the items' own contexts loaded into a separate,
 * emptied data directory so the user's data is never touched.
 */
export async function evaluateQaFile(
  path: string,
  options: { unit: 'PASSAGE' | 'SENTENCE'; contextsAsCorpus: boolean; log: Logger },
): Promise<string> {
  let items = await readQaFile(path);
  const env = options.contextsAsCorpus ? { ...process.env, NEO4J_URI: '', CHRONOQL_DATA_DIR: join(process.cwd(), '.chronoql-eval') } : process.env;
  const runtime = await openRuntime(loadConfig(env), options.log);
  try {
    if (options.contextsAsCorpus) {
      await deleteAllKnowledge(runtime.services.db);
      const documents = new Map(items.flatMap((item) => item.documents).map((doc) => [doc.id, doc.text]));
      if (documents.size === 0) throw new RangeError(`${path}: --contexts-as-corpus needs items with "context"`);
      const articles: ArticleInput[] = [...documents].map(([id, text]) => ({ id, title: id, text, infobox: {} }));
      await runtime.services.ingest.ingest(articles, { takenAt: CORPUS_DATE, source: `eval:${path}` });
      items = items.map((item): QaItem => ({ ...item, context: item.documents.map((doc) => doc.id) }));
    }
    await runtime.services.retrieval.catchUp();
    const rows: Array<[string, Awaited<ReturnType<typeof evaluateRetrieval>>]> = [];
    for (const mode of EVALUATED_MODES) {
      rows.push([mode, await evaluateRetrieval(runtime.services.retrieval, items, { mode, unit: SearchUnit[options.unit], defaultAsOf: new Date() })]);
    }
    return table(rows);
  } finally {
    await runtime.close();
  }
}
