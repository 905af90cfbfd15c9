/**
 * Dynamic QA items from the graph's facts (DynaQuest's per-attribute templates, GrowOVER's
 * types): at each snapshot after the first, every fact valid then whose value a passage
 * states becomes a question, typed CHANGED (the value was updated by this snapshot; the old
 * value is the previous answer), NEW (the attribute appeared with it) or UNCHANGED (carried
 * over), and linked to the fact and to the passages that state it.
 */
import type { AnsweringRepository, FactForQuestions } from '../graph/answeringRepository.js';
import { FactChangeKind, type SnapshotRecord } from '../domain/model.js';
import { isoDay } from '../domain/time.js';

export type QuestionType = 'NEW' | 'CHANGED' | 'UNCHANGED';

export interface GeneratedQuestion {
  id: string;
  question: string;
  answers: string[];
  previousAnswers: string[];
  type: QuestionType;
  asOf: string;
  /** The article the question is about (QA files' `context`). */
  context: string[];
  factId: string;
  /** Passages valid at asOf that state the answer. */
  evidence: string[];
}

const ROLE_WORDS = new Set(
  'president minister chancellor ceo cto cfo chairman chair chairperson governor manager coach captain champion holder speaker leader owner co-owner founder director secretary king queen monarch mayor head chief elect designate challenger winner'.split(
    ' ',
  ),
);
const DATE_VALUE = /^(\d{1,2} )?(January|February|March|April|May|June|July|August|September|October|November|December)?\s?\d{4}$/;

/** "Prime Minister" → "prime minister"; initialisms stay ("CEO"). */
function attributePhrase(attribute: string): string {
  return attribute
    .split(/\s+/)
    .map((word) => (word.length > 1 && word === word.toUpperCase() ? word : word.toLowerCase()))
    .join(' ');
}

export function questionFor(attribute: string, subject: string, value: string): string {
  const words = attribute.toLowerCase().split(/[\s-]+/);
  if (DATE_VALUE.test(value.trim())) return `When was the ${attributePhrase(attribute)} of ${subject}?`;
  if (words.some((word) => ROLE_WORDS.has(word))) return `Who is the ${attributePhrase(attribute)} of ${subject}?`;
  return `What is the ${attributePhrase(attribute)} of ${subject}?`;
}

function typeOf(item: FactForQuestions, snapshot: SnapshotRecord): QuestionType {
  if (item.fact.validFrom.getTime() < snapshot.takenAt.getTime()) return 'UNCHANGED';
  return item.fact.change === FactChangeKind.UPDATED ? 'CHANGED' : 'NEW';
}

/** Items at every snapshot after the first, or only at the latest snapshot taken at or before `asOf`. */
export async function generateQuestions(repository: AnsweringRepository, snapshots: readonly SnapshotRecord[], asOf?: Date): Promise<GeneratedQuestion[]> {
  const ordered = [...snapshots].sort((a, b) => a.takenAt.getTime() - b.takenAt.getTime());
  const chosen = asOf ? ordered.filter((s) => s.takenAt.getTime() <= asOf.getTime()).slice(-1) : ordered.slice(1);
  if (asOf && chosen.length === 0) throw new RangeError(`--as-of ${isoDay(asOf)} is before the first snapshot`);
  const items: GeneratedQuestion[] = [];
  for (const snapshot of chosen) {
    for (const item of await repository.factsForQuestions(snapshot.takenAt)) {
      if (item.passageIds.length === 0) continue;
      // A false change is not a change: it generates no question.
      if (item.fact.change === FactChangeKind.REFINED && item.fact.validFrom.getTime() >= snapshot.takenAt.getTime()) continue;
      const type = typeOf(item, snapshot);
      items.push({
        id: `${item.fact.id}@${isoDay(snapshot.takenAt)}`,
        question: questionFor(item.fact.attribute, item.title, item.fact.value),
        answers: [item.fact.value],
        previousAnswers: type === 'CHANGED' && item.previousValue !== null ? [item.previousValue] : [],
        type,
        asOf: isoDay(snapshot.takenAt),
        context: [item.fact.subject],
        factId: item.fact.id,
        evidence: item.passageIds,
      });
    }
  }
  return items;
}
