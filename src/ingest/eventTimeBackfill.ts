/**
 * Reads and stores the event times of versions written before ChronoQL read them (migration 012
 * labels those :PendingEventTimes), as the ingest would have read them: a sentence with the
 * sentences of its paragraph valid when it was written, a passage from the sentences it was cut
 * from then, a fact from its value and the infobox valid then. Each batch of articles is one
 * transaction, so an interrupted run leaves whole articles done and the next run goes on with
 * the rest; a version is read once, and a run with nothing waiting writes nothing.
 */
import type { EventTime } from '../domain/model.js';
import { isValidAt } from '../domain/time.js';
import type { Database } from '../graph/database.js';
import { EventTimeRepository, type ArticleHistory, type HistoryVersion } from '../graph/eventTimeRepository.js';
import { readEventTimes } from '../text/eventTimes.js';
import { ArticleEventTimes, factEventTimes } from './eventTimePlan.js';
import { attributeKey } from './factDiff.js';
import { chunkPassages } from './passages.js';

const ARTICLES_PER_TRANSACTION = 50;

export interface EventTimeBackfillReport {
  articles: number;
  versions: number;
}

type Read = Array<{ id: string; eventTimes: EventTime[] }>;

/** The event times of an article's waiting versions, by the label they are stored under. */
export function readHistory(history: ArticleHistory): { Sentence: Read; Passage: Read; Fact: Read } {
  const read = { Sentence: [] as Read, Passage: [] as Read, Fact: [] as Read };
  const waiting = [...history.sentences, ...history.passages].filter((version) => version.pending);
  for (const at of new Set(waiting.map((version) => version.validFrom.getTime()))) {
    const instant = new Date(at);
    const sentences = history.sentences.filter((sentence) => isValidAt(sentence, instant)).sort((a, b) => (a.orderKey < b.orderKey ? -1 : 1));
    const times = new ArticleEventTimes(sentences);
    const writtenThen = (version: HistoryVersion): boolean => version.pending && version.validFrom.getTime() === at;
    sentences.forEach((sentence, index) => {
      if (writtenThen(sentence)) read.Sentence.push({ id: sentence.id, eventTimes: times.ofSentence(index) });
    });
    const chunks = chunkPassages(sentences);
    for (const passage of history.passages.filter(writtenThen)) {
      const chunk = chunks.find((candidate) => candidate.text === passage.text);
      // A passage cut by other rules than today's is read on its own.
      read.Passage.push({ id: passage.id, eventTimes: chunk ? times.ofPassage(chunk) : readEventTimes(passage.text) });
    }
  }
  for (const fact of history.facts.filter((version) => version.pending)) {
    const infobox = Object.fromEntries(history.facts.filter((other) => isValidAt(other, fact.validFrom)).map((other) => [other.attribute, other.text]));
    read.Fact.push({ id: fact.id, eventTimes: factEventTimes(infobox).get(attributeKey(fact.attribute)) ?? readEventTimes(fact.text) });
  }
  const done = new Set([...read.Sentence, ...read.Passage].map((version) => version.id));
  // A waiting version no instant of its article explains (it was never valid) still gets read, on its own.
  for (const version of history.sentences.filter((sentence) => sentence.pending && !done.has(sentence.id)))
    read.Sentence.push({ id: version.id, eventTimes: readEventTimes(version.text) });
  return read;
}

/** Reads every waiting version's event times; `onProgress` hears how many of those waiting at the start are done. */
export async function backfillEventTimes(db: Database, onProgress?: (done: number, total: number) => void): Promise<EventTimeBackfillReport> {
  const total = await new EventTimeRepository(db).countPending();
  const report: EventTimeBackfillReport = { articles: 0, versions: 0 };
  onProgress?.(0, total);
  for (;;) {
    const batch = await db.writeTransaction(async (tx) => {
      const repository = new EventTimeRepository(tx);
      const articleIds = await repository.pendingArticles(ARTICLES_PER_TRANSACTION);
      let versions = 0;
      for (const history of await repository.histories(articleIds)) {
        const read = readHistory(history);
        for (const label of ['Sentence', 'Passage', 'Fact'] as const) versions += await repository.storeEventTimes(label, read[label]);
      }
      return { articles: articleIds.length, versions };
    });
    if (batch.articles === 0) return report;
    report.articles += batch.articles;
    report.versions += batch.versions;
    onProgress?.(Math.min(report.versions, total), total);
  }
}
