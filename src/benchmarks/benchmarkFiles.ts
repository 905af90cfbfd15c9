/**
 * The benchmark as files: exported as QA JSON Lines (README.md, "QA files"), and public sets
 * imported with their contexts as IMPORTED items.
 */
import { BenchmarkRepository, type BenchmarkFilter, type NewItemVersion } from '../graph/benchmarkRepository.js';
import type { Database } from '../graph/database.js';
import { isoDay, parseDateInput } from '../domain/time.js';
import type { BenchmarkItemType, BenchmarkKind } from '../domain/model.js';
import { parseImportedItems, type ImportShape } from './importShapes.js';

/** One exported item: what `eval-answers` and `eval` read, plus the item's provenance. */
export interface ExportedItem {
  id: string;
  question: string;
  answers: string[];
  previousAnswers: string[];
  type: BenchmarkItemType;
  kind: BenchmarkKind;
  asOf: string;
  /** The article the item is about, or the contexts an imported item came with. */
  context: Array<string | { title: string; text: string }>;
  /** The texts of the sentences or fact the answer rests on. */
  evidence: string[];
  dialogueId?: string;
  turn?: number;
}

const EXPORT_PAGE = 500;

/** Every item valid at the filter's date, in item order, paged through the store. */
export async function exportLines(repository: BenchmarkRepository, filter: BenchmarkFilter): Promise<ExportedItem[]> {
  const lines: ExportedItem[] = [];
  for (let after: string | null = null; ;) {
    const page = await repository.page(filter, EXPORT_PAGE, after);
    for (const item of page.items) {
      lines.push({
        id: item.itemId,
        question: item.question,
        answers: item.answers,
        previousAnswers: item.previousAnswers,
        type: item.type,
        kind: item.kind,
        asOf: isoDay(filter.asOf),
        context: item.kind === 'IMPORTED' ? item.contexts : item.articleId ? [item.articleId] : [],
        evidence: item.evidence.map((evidence) => evidence.text),
        ...(item.dialogueId !== null ? { dialogueId: item.dialogueId, turn: item.turn ?? 0 } : {}),
      });
    }
    if (!page.hasNext || page.items.length === 0) return lines;
    after = page.items[page.items.length - 1]!.itemId;
  }
}

/**
 * Imports a public set: each item valid from its own date (else from `now`), typed as the set
 * says (else UNCHANGED). Item ids are the set's name and the item's id, so importing the same
 * file again writes nothing new. The whole set is written in one transaction, or nothing is.
 */
export async function importItems(db: Database, text: string, shape: ImportShape, source: string, now: Date): Promise<{ items: number; written: number }> {
  const { items } = parseImportedItems(text, shape, source);
  const byDate = new Map<number, NewItemVersion[]>();
  for (const item of items) {
    const from = item.asOf ? parseDateInput(item.asOf, `${source} item ${item.id}`) : now;
    const itemId = `${source}:${item.id}`;
    const version: NewItemVersion = {
      id: itemId,
      itemId,
      kind: 'IMPORTED',
      origin: item.type ?? 'UNCHANGED',
      question: item.question,
      answers: item.answers,
      previousAnswers: item.previousAnswers,
      articleId: null,
      dialogueId: null,
      turn: null,
      source,
      sentenceIds: [],
      factId: null,
      contexts: item.contexts,
    };
    const sameDate = byDate.get(from.getTime());
    if (sameDate) sameDate.push(version);
    else byDate.set(from.getTime(), [version]);
  }
  const written = await db.writeTransaction(async (tx) => {
    const repository = new BenchmarkRepository(tx);
    let count = 0;
    for (const [time, versions] of byDate) count += await repository.write(versions, new Date(time), null);
    return count;
  });
  return { items: items.length, written };
}
