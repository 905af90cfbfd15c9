import { generateNKeysBetween } from 'fractional-indexing';
import { ChangeKind, FactChangeKind, SentenceLabel, type EventTime } from '../domain/model.js';
import type { ArticlePlan, ArticleState, PlannedChange } from '../domain/plan.js';
import { ArticleEventTimes, factEventTimes } from './eventTimePlan.js';
import { attributeKey, diffFacts } from './factDiff.js';
import type { SentenceLabeler } from './sentenceLabeler.js';
import { chunkPassages, type PassageChunk } from './passages.js';
import { splitSentences } from './sentenceSplitter.js';
import type { ArticleInput } from './snapshotReader.js';

/**
 * Works out the new versions, closed versions and change events for one article of a
 * snapshot. Version ids derive from the article, the snapshot id (its day, or its instant for a
 * date-time snapshot) and the position, so
 * planning the same snapshot twice yields the same ids.
 */
export async function planArticle(state: ArticleState, article: ArticleInput, snapshotId: string, labeler: SentenceLabeler): Promise<ArticlePlan> {
  const plan: ArticlePlan = {
    articleId: article.id,
    title: article.title,
    isNewArticle: !state.exists,
    sentenceCount: 0,
    createSentences: [],
    closeSentenceIds: [],
    sentenceRevisions: [],
    createFacts: [],
    closeFactIds: [],
    factSupersessions: [],
    createPassages: [],
    closePassageIds: [],
    changes: [],
  };
  const change = (kind: ChangeKind, ids: Partial<Omit<PlannedChange, 'kind' | 'articleId'>> = {}): void => {
    plan.changes.push({
      kind,
      articleId: article.id,
      sentenceId: ids.sentenceId ?? null,
      previousSentenceId: ids.previousSentenceId ?? null,
      factId: ids.factId ?? null,
      previousFactId: ids.previousFactId ?? null,
    });
  };
  if (!state.exists) change(ChangeKind.ARTICLE_ADDED);

  await planSentences(state, article, snapshotId, labeler, plan, change);
  planFacts(state, article, snapshotId, plan, change);
  return plan;
}

type RecordChange = (kind: ChangeKind, ids?: Partial<Omit<PlannedChange, 'kind' | 'articleId'>>) => void;

async function planSentences(
  state: ArticleState,
  article: ArticleInput,
  snapshotId: string,
  labeler: SentenceLabeler,
  plan: ArticlePlan,
  change: RecordChange,
): Promise<void> {
  const current = splitSentences(article.text);
  plan.sentenceCount = current.length;
  const eventTimes = new ArticleEventTimes(current);
  planPassages(state, chunkPassages(current), article.id, snapshotId, plan, eventTimes);
  const { alignments, deletedIds } = await labeler.label(state.sentences, current);
  const keyOf = new Map(state.sentences.map((sentence) => [sentence.id, sentence.orderKey]));
  const orderKeys = assignOrderKeys(alignments.map((a) => (a.kind === 'KEPT' ? keyOf.get(a.previousId)! : null)));

  alignments.forEach((alignment, index) => {
    if (alignment.kind === 'KEPT') return;
    const id = `${article.id}#${snapshotId}#${index}`;
    const origin = !state.exists
      ? null
      : alignment.kind === 'RELOCATED'
        ? SentenceLabel.UNCHANGED
        : alignment.kind === 'CHANGED'
          ? SentenceLabel.CHANGED
          : SentenceLabel.NEW;
    plan.createSentences.push({
      id,
      articleId: article.id,
      text: current[index]!.text,
      orderKey: orderKeys[index]!,
      startsParagraph: current[index]!.startsParagraph,
      origin,
      confident: alignment.kind === 'NEW' && state.exists ? (alignment.confident ?? true) : null,
      eventTimes: eventTimes.ofSentence(index),
    });
    if (alignment.kind === 'NEW') {
      if (state.exists) change(ChangeKind.SENTENCE_NEW, { sentenceId: id });
      return;
    }
    // A merge closes every sentence it joined; a split closes its one sentence once.
    for (const previousId of [alignment.previousId, ...(alignment.mergedIds ?? [])]) {
      if (!plan.closeSentenceIds.includes(previousId)) plan.closeSentenceIds.push(previousId);
      plan.sentenceRevisions.push({ from: previousId, to: id });
    }
    if (alignment.kind === 'CHANGED') {
      change(ChangeKind.SENTENCE_CHANGED, { sentenceId: id, previousSentenceId: alignment.previousId });
    }
  });
  for (const deletedId of deletedIds) {
    plan.closeSentenceIds.push(deletedId);
    change(ChangeKind.SENTENCE_DELETED, { previousSentenceId: deletedId });
  }
}

/** A passage whose text is still in the article keeps its node (and embedding); the rest are replaced. */
function planPassages(
  state: ArticleState,
  chunks: PassageChunk[],
  articleId: string,
  snapshotId: string,
  plan: ArticlePlan,
  eventTimes: ArticleEventTimes,
): void {
  const openByText = new Map<string, string[]>();
  for (const passage of state.passages) openByText.set(passage.text, [...(openByText.get(passage.text) ?? []), passage.id]);
  chunks.forEach((chunk, index) => {
    if (openByText.get(chunk.text)?.shift() !== undefined) return;
    plan.createPassages.push({ id: `${articleId}#p#${snapshotId}#${index}`, articleId, text: chunk.text, eventTimes: eventTimes.ofPassage(chunk) });
  });
  for (const ids of openByText.values()) plan.closePassageIds.push(...ids);
}

/**
 * Fractional order keys: a kept sentence keeps its key, new versions get keys between their
 * kept neighbours, so inserting a sentence never rewrites the sentences after it.
 */
export function assignOrderKeys(keptKeys: ReadonlyArray<string | null>): string[] {
  const keys: string[] = [];
  let index = 0;
  while (index < keptKeys.length) {
    const kept = keptKeys[index];
    if (kept !== null && kept !== undefined) {
      keys.push(kept);
      index += 1;
      continue;
    }
    let runEnd = index;
    while (runEnd < keptKeys.length && keptKeys[runEnd] === null) runEnd += 1;
    const before = index > 0 ? keys[index - 1]! : null;
    const after = runEnd < keptKeys.length ? keptKeys[runEnd]! : null;
    keys.push(...generateNKeysBetween(before, after, runEnd - index));
    index = runEnd;
  }
  return keys;
}

function planFacts(state: ArticleState, article: ArticleInput, snapshotId: string, plan: ArticlePlan, change: RecordChange): void {
  let eventTimes: Map<string, EventTime[]> | undefined;
  for (const factChange of diffFacts(state.facts, article.infobox)) {
    if (factChange.kind === 'REMOVED') {
      plan.closeFactIds.push(factChange.previous.id);
      change(ChangeKind.FACT_REMOVED, { previousFactId: factChange.previous.id });
      continue;
    }
    const key = attributeKey(factChange.attribute);
    const id = `${article.id}#${key}#${snapshotId}`;
    const kind = !state.exists
      ? null
      : factChange.kind === 'NEW'
        ? FactChangeKind.NEW
        : factChange.kind === 'UPDATED'
          ? FactChangeKind.UPDATED
          : FactChangeKind.REFINED;
    plan.createFacts.push({
      id,
      subject: article.id,
      attribute: factChange.attribute,
      attributeKey: key,
      value: factChange.value,
      change: kind,
      addedMembers: factChange.kind === 'UPDATED' ? factChange.addedMembers : [],
      removedMembers: factChange.kind === 'UPDATED' ? factChange.removedMembers : [],
      eventTimes: (eventTimes ??= factEventTimes(article.infobox)).get(key) ?? [],
    });
    if (factChange.kind === 'NEW') {
      if (state.exists) change(ChangeKind.FACT_NEW, { factId: id });
      continue;
    }
    plan.closeFactIds.push(factChange.previous.id);
    plan.factSupersessions.push({ from: factChange.previous.id, to: id });
    change(factChange.kind === 'UPDATED' ? ChangeKind.FACT_UPDATED : ChangeKind.FACT_REFINED, { factId: id, previousFactId: factChange.previous.id });
  }
}

export function planIsEmpty(plan: ArticlePlan): boolean {
  return (
    plan.createSentences.length +
      plan.closeSentenceIds.length +
      plan.createFacts.length +
      plan.closeFactIds.length +
      plan.createPassages.length +
      plan.closePassageIds.length ===
    0
  );
}
