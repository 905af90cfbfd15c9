/**
 * Keeps the living benchmark in step with the store, one snapshot at a time (GrowOVER's
 * Algorithm 4), right after the snapshot's ingest:
 * 1. an item whose evidence this snapshot closed is carried over when every closed sentence was
 *    only moved or reworded (labeled UNCHANGED) and its answer still reads there, or a fact was
 *    only refined: a new version rests on the successors. Otherwise the item is retired: it
 *    stays in history and leaves the current benchmark;
 * 2. new items are drafted from the snapshot's new and changed sentences (or an article's first
 *    paragraphs) and facts, and a drafted question is kept only if the reader answers it from
 *    its own evidence with token F1 ≥ ROUND_TRIP_F1 (the round-trip filter).
 * Only what the snapshot created or closed is read, so the cost follows the changes. Every step
 * is idempotent (version ids derive from the item and the snapshot, drafted articles are
 * marked in the same transaction), so a run cut short is finished by running it again.
 */
import type { Database } from '../graph/database.js';
import { BenchmarkRepository, type AffectedItem, type ArticleAtSnapshot, type NewItemVersion, type SnapshotSentence } from '../graph/benchmarkRepository.js';
import { f1Score } from '../qa/answerMetrics.js';
import { analyseQuestion } from '../qa/question.js';
import type { SpanReader } from '../qa/reader/spanReader.js';
import { questionFor } from './questionGeneration.js';
import {
  changedSentences,
  isCandidateParagraph,
  MAX_CLUSTERS,
  isFirstSnapshot,
  newSentenceRuns,
  onePerCluster,
  paragraphsOf,
  type EvidenceGroup,
} from './evidenceGroups.js';
import type { DialogueGenerator, DraftQuestion, QuestionGenerator } from './types.js';

/** The reader's answer must reach this token F1 against the drafted answer for the item to be kept. */
export const ROUND_TRIP_F1 = 0.5;
const ARTICLES_PER_TRANSACTION = 100;
const ITEMS_PER_TRANSACTION = 500;

export interface BenchmarkMaintenanceOptions {
  db: Database;
  questions: QuestionGenerator;
  /** Drafts dialogues when an OpenAI-compatible generator is configured; null otherwise. */
  dialogues: DialogueGenerator | null;
  /** Unit-length sentence vectors for clustering an article's paragraphs. */
  embed: (texts: readonly string[]) => Promise<Float32Array[]>;
  reader: SpanReader;
}

export interface MaintenanceReport {
  snapshotId: string;
  carriedOver: number;
  retired: number;
  /** Drafted questions put to the round-trip filter (a group's drafts are tried best first until one passes), and how many it kept. */
  drafted: number;
  kept: number;
  factItems: number;
  dialogueTurns: number;
  carryOverMs: number;
  draftingMs: number;
}

/** What happens to an item whose evidence a snapshot closed. */
export type CarryOver = { action: 'carry'; sentenceIds: string[]; factId: string | null; answers: string[] } | { action: 'retire' };

const normalise = (text: string): string => text.toLowerCase().replace(/\s+/g, ' ');

/**
 * GrowOVER's rule: an item stays when all its evidence is UNCHANGED. A closed sentence counts as
 * unchanged when every successor is labeled UNCHANGED (moved, merged, split or reworded), and
 * then a question's answer must still appear in its new evidence (a dialogue turn's reply is
 * the expert's own words, so the label alone decides); a closed fact when it was only refined
 * (the refined value becomes the answer). Anything else (changed, deleted, updated, removed)
 * retires the item.
 */
export function carryOver(item: AffectedItem): CarryOver {
  const sentences: Array<{ id: string; text: string }> = [];
  let factId: string | null = null;
  let answers = item.answers;
  for (const evidence of item.evidence) {
    if (!evidence.closed) {
      if (item.kind === 'FACT_QA') factId = evidence.id;
      else sentences.push({ id: evidence.id, text: evidence.text });
      continue;
    }
    if (evidence.successors.length === 0) return { action: 'retire' };
    if (item.kind === 'FACT_QA') {
      const successor = evidence.successors[0]!;
      if (successor.label !== 'REFINED') return { action: 'retire' };
      factId = successor.id;
      answers = [successor.text, ...item.answers.filter((answer) => answer !== successor.text)];
      continue;
    }
    if (evidence.successors.some((successor) => successor.label !== 'UNCHANGED')) return { action: 'retire' };
    for (const successor of evidence.successors) if (!sentences.some((sentence) => sentence.id === successor.id)) sentences.push(successor);
  }
  if (item.kind !== 'FACT_QA' && item.kind !== 'DIALOGUE_TURN') {
    const text = normalise(sentences.map((sentence) => sentence.text).join(' '));
    if (!item.answers.some((answer) => text.includes(normalise(answer)))) return { action: 'retire' };
  }
  return { action: 'carry', sentenceIds: sentences.map((sentence) => sentence.id), factId, answers };
}

export class BenchmarkMaintainer {
  constructor(private readonly options: BenchmarkMaintenanceOptions) {}

  /** Maintains every complete snapshot from the first one not yet maintained, in date order. */
  async catchUp(onSnapshot?: (report: MaintenanceReport) => void): Promise<MaintenanceReport[]> {
    const snapshots = await new BenchmarkRepository(this.options.db).snapshots();
    const first = snapshots.findIndex((snapshot) => !snapshot.maintained);
    if (first < 0) return [];
    const reports: MaintenanceReport[] = [];
    for (const snapshot of snapshots.slice(first)) {
      const report = await this.maintain(snapshot);
      onSnapshot?.(report);
      reports.push(report);
    }
    return reports;
  }

  async maintain(snapshot: { id: string; takenAt: Date }): Promise<MaintenanceReport> {
    const report: MaintenanceReport = {
      snapshotId: snapshot.id,
      carriedOver: 0,
      retired: 0,
      drafted: 0,
      kept: 0,
      factItems: 0,
      dialogueTurns: 0,
      carryOverMs: 0,
      draftingMs: 0,
    };
    let started = performance.now();
    await this.carryOverOrRetire(snapshot, report);
    report.carryOverMs = performance.now() - started;
    started = performance.now();
    await this.draftFromText(snapshot, report);
    await this.draftFromFacts(snapshot, report);
    report.draftingMs = performance.now() - started;
    await new BenchmarkRepository(this.options.db).markMaintained(snapshot.id);
    return report;
  }

  private async carryOverOrRetire(snapshot: { id: string; takenAt: Date }, report: MaintenanceReport): Promise<void> {
    const affected = await new BenchmarkRepository(this.options.db).affectedBy(snapshot.takenAt);
    for (let start = 0; start < affected.length; start += ITEMS_PER_TRANSACTION) {
      const chunk = affected.slice(start, start + ITEMS_PER_TRANSACTION);
      const decisions = chunk.map((item) => ({ item, decision: carryOver(item) }));
      const carried = decisions.flatMap(({ item, decision }) => (decision.action === 'carry' ? [{ item, decision }] : []));
      const retired = decisions.filter(({ decision }) => decision.action === 'retire').map(({ item }) => item.versionId);
      await this.options.db.writeTransaction(async (tx) => {
        const repository = new BenchmarkRepository(tx);
        await repository.retire(retired, snapshot.takenAt, snapshot.id);
        await repository.carry(
          carried.map(({ item, decision }) => ({ versionId: item.versionId, newVersionId: `${item.itemId}@${snapshot.id}`, ...decision })),
          snapshot.takenAt,
          snapshot.id,
        );
      });
      report.carriedOver += carried.length;
      report.retired += retired.length;
    }
  }

  private async draftFromText(snapshot: { id: string; takenAt: Date }, report: MaintenanceReport): Promise<void> {
    const articleIds = await new BenchmarkRepository(this.options.db).articlesToDraft(snapshot.takenAt, snapshot.id);
    for (let start = 0; start < articleIds.length; start += ARTICLES_PER_TRANSACTION) {
      const batch = articleIds.slice(start, start + ARTICLES_PER_TRANSACTION);
      const articles = await new BenchmarkRepository(this.options.db).articlesAt(batch, snapshot.takenAt);
      const versions = await this.draftArticles(articles, snapshot.id, report);
      await this.options.db.writeTransaction(async (tx) => {
        const repository = new BenchmarkRepository(tx);
        await repository.write(versions, snapshot.takenAt, snapshot.id);
        await repository.markDrafted(batch, snapshot.id);
      });
    }
  }

  private async groupsOf(article: ArticleAtSnapshot): Promise<Array<EvidenceGroup<SnapshotSentence> & { paragraph: boolean }>> {
    if (!isFirstSnapshot(article.sentences)) {
      return [...newSentenceRuns(article.sentences), ...changedSentences(article.sentences)].map((group) => ({ ...group, paragraph: false }));
    }
    const candidates = paragraphsOf(article.sentences).filter((paragraph) => isCandidateParagraph(paragraph.sentences));
    // With no more candidates than clusters every one is taken: nothing to embed.
    const chosen =
      candidates.length <= MAX_CLUSTERS
        ? candidates.map((_, index) => index)
        : onePerCluster(await this.options.embed(candidates.map((paragraph) => paragraph.sentences.map((sentence) => sentence.text).join(' '))));
    return chosen.map((index) => ({ key: `p${candidates[index]!.start}`, type: 'NEW' as const, sentences: candidates[index]!.sentences, paragraph: true }));
  }

  /**
   * The round-trip filter over a batch of articles: each group's drafts are read best first, in
   * rounds (one reader pass over every group still without an item), until one is answered
   * from its own evidence with token F1 ≥ ROUND_TRIP_F1 or the group has no draft left.
   */
  private async draftArticles(articles: readonly ArticleAtSnapshot[], snapshotId: string, report: MaintenanceReport): Promise<NewItemVersion[]> {
    const versions: NewItemVersion[] = [];
    const pending: Array<{ article: ArticleAtSnapshot; itemId: string; type: 'NEW' | 'CHANGED'; sentences: SnapshotSentence[]; drafts: DraftQuestion[] }> = [];
    for (const article of articles) {
      for (const group of await this.groupsOf(article)) {
        const input = { title: article.title, sentences: group.sentences.map(({ text, previousText }) => ({ text, previousText })), type: group.type };
        const itemId = `${article.articleId}#${snapshotId}#${group.key}`;
        pending.push({ article, itemId, type: group.type, sentences: group.sentences, drafts: await this.options.questions.questions(input) });
        if (group.paragraph && this.options.dialogues)
          versions.push(...(await this.draftDialogues(this.options.dialogues, input, group.sentences, `${itemId}#d`, article.articleId)));
      }
    }
    report.dialogueTurns += versions.length;
    for (let round = 0; pending.some((group) => group.drafts.length > round); round++) {
      const tried = pending.filter((group) => group.drafts.length > round);
      const evidenceOf = (group: (typeof tried)[number]): SnapshotSentence[] => group.drafts[round]!.evidence.flatMap((i) => group.sentences[i] ?? []);
      const spans = await this.options.reader.read(
        tried.map((group) => ({
          question: analyseQuestion(group.drafts[round]!.question),
          text: evidenceOf(group)
            .map((sentence) => sentence.text)
            .join(' '),
        })),
      );
      report.drafted += tried.length;
      tried.forEach((group, i) => {
        const draft = group.drafts[round]!;
        const evidence = evidenceOf(group);
        const span = spans[i];
        if (!span || f1Score(span.text, draft.answers) < ROUND_TRIP_F1) return;
        group.drafts = [];
        report.kept += 1;
        versions.push({
          id: group.itemId,
          itemId: group.itemId,
          kind: 'TEXT_QA',
          origin: group.type,
          question: draft.question,
          answers: draft.answers,
          previousAnswers: draft.previousAnswers,
          articleId: group.article.articleId,
          dialogueId: null,
          turn: null,
          source: this.options.questions.name,
          sentenceIds: evidence.map((sentence) => sentence.id),
          factId: null,
          contexts: [],
        });
      });
    }
    return versions;
  }

  private async draftDialogues(
    generator: DialogueGenerator,
    input: Parameters<DialogueGenerator['dialogues']>[0],
    sentences: readonly SnapshotSentence[],
    dialogueId: string,
    articleId: string,
  ): Promise<NewItemVersion[]> {
    const [dialogue] = await generator.dialogues(input);
    if (!dialogue) return [];
    return dialogue.turns.map((turn, index) => ({
      id: `${dialogueId}#${index}`,
      itemId: `${dialogueId}#${index}`,
      kind: 'DIALOGUE_TURN' as const,
      origin: input.type,
      question: turn.user,
      answers: [turn.expert],
      previousAnswers: [],
      articleId,
      dialogueId,
      turn: index,
      source: generator.name,
      sentenceIds: [sentences[turn.evidence]!.id],
      factId: null,
      contexts: [],
    }));
  }

  private async draftFromFacts(snapshot: { id: string; takenAt: Date }, report: MaintenanceReport): Promise<void> {
    const facts = await new BenchmarkRepository(this.options.db).factsToDraft(snapshot.takenAt);
    const versions: NewItemVersion[] = facts.map((fact) => ({
      id: `fact:${fact.id}`,
      itemId: `fact:${fact.id}`,
      kind: 'FACT_QA',
      origin: fact.change === 'UPDATED' ? 'CHANGED' : 'NEW',
      question: questionFor(fact.attribute, fact.title, fact.value),
      answers: [fact.value],
      previousAnswers: fact.change === 'UPDATED' && fact.previousValue !== null ? [fact.previousValue] : [],
      articleId: fact.subject,
      dialogueId: null,
      turn: null,
      source: 'fact-template',
      sentenceIds: [],
      factId: fact.id,
      contexts: [],
    }));
    for (let start = 0; start < versions.length; start += ITEMS_PER_TRANSACTION) {
      report.factItems += await new BenchmarkRepository(this.options.db).write(
        versions.slice(start, start + ITEMS_PER_TRANSACTION),
        snapshot.takenAt,
        snapshot.id,
      );
    }
  }
}
