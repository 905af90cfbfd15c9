/**
 * Planning a question before it is answered: its input checked, the time it names read and
 * turned into the instants to answer at, the articles and the fact it asks about linked, the
 * conversation's evidence loaded, and the retrieval decision made at each instant.
 */
import type { AnsweringRepository, ChangeProfile } from '../graph/answeringRepository.js';
import type { FactRecord } from '../domain/model.js';
import type { ReadRepository } from '../graph/readRepository.js';
import type { SnapshotRepository } from '../graph/snapshotRepository.js';
import { isoDay } from '../domain/time.js';
import { isValidAt } from '../domain/time.js';
import { SearchUnit } from '../retrieval/retriever.js';
import { type RetrievalService } from '../retrieval/retrievalService.js';
import { ASK_LIMITS, AskInputError, checkRequest } from './askInput.js';
import { analyseInConversation, continuation, conversationSummary } from './conversation.js';
import { decideRetrieval } from './decision.js';
import { documentEvidence, factEvidence } from './evidence.js';
import { FactLinker, formerValues, type FactMatch } from './factLinker.js';
import type { Generator, GeneratorRegistry } from './generators/index.js';
import { analyseQuestion, questionNames, type QuestionAnalysis } from './question.js';
import type { SpanReader } from './reader/spanReader.js';
import { SubjectIndex, type LinkedSubject } from './subjects.js';
import { readTimeScope, scopeInstants, TimeScopeKind, type ScopeInstants, type TimeScope } from './timeScope.js';
import {
  DecisionAction,
  EvidenceKind,
  RetrievalMode,
  type AskRequest,
  type Decision,
  type Evidence,
  type RetrievalRound,
  type ScoredCandidate,
  type Turn,
} from './types.js';

/** A candidate with the gate's feature row (kept for training the gate) and the reader's raw score. */
export interface GatedCandidate extends ScoredCandidate {
  features: number[];
  readerScore: number | null;
}

/** One question answered at one instant, on its way through the pipeline. */
export interface Job {
  question: QuestionAnalysis;
  /** The question's sentence embedding (for linking it to facts). */
  vector: Float32Array;
  names: string[];
  /** The question's names that no passage of the store mentions ("nvidia" in a store without Nvidia). */
  unheardOf: string[];
  query: string;
  asOf: Date;
  mode: RetrievalMode;
  k: number;
  generator: Generator;
  subjects: LinkedSubject[];
  profiles: Map<string, ChangeProfile>;
  /** The asked fact valid at asOf (or its previous version, for "before that"). */
  factMatch: FactMatch | null;
  formerValues: string[];
  memoryFact: FactRecord | null;
  conversationEvidence: Evidence[];
  decision: Decision;
  rounds: RetrievalRound[];
  candidates: GatedCandidate[];
  chosen: GatedCandidate | null;
}

/** One request: its time scope and the jobs answering it at the scope's instants. */
export interface Asked {
  question: string;
  asOf: Date;
  scope: TimeScope | null;
  plan: ScopeInstants;
  jobs: Job[];
}

function scopeCue(scope: TimeScope, plan: ScopeInstants): string {
  if (plan.note) return plan.note;
  if (scope.kind === TimeScopeKind.CURRENT) return `time expression "${scope.text}": as of asOf`;
  if (scope.kind === TimeScopeKind.PREVIOUS) return `time expression "${scope.text}": asks for an earlier value`;
  const at = plan.instants.map(isoDay).join(', ');
  return `time expression "${scope.text}" (${scope.kind}): answered as of ${at}${plan.instants.length > 1 ? ` (${plan.main === 'longest' ? 'the answer that held longest' : `the ${plan.main} answer`} first)` : ''}`;
}

export interface QuestionPlannerOptions {
  reads: ReadRepository;
  answering: AnsweringRepository;
  snapshots: SnapshotRepository;
  retrieval: RetrievalService;
  reader: SpanReader;
  generators: GeneratorRegistry;
  /** The generator's knowledge cutoff; default the earliest snapshot's date. */
  cutoff?: Date | null;
  factCandidates?: boolean;
}

export class QuestionPlanner {
  private readonly linker: FactLinker;
  private subjectIndex: { version: string; index: SubjectIndex } | null = null;

  constructor(private readonly options: QuestionPlannerOptions) {
    this.linker = new FactLinker((texts) => options.reader.embedQueries(texts), options.reader.dimension);
  }

  /** Every request checked and planned; `where` names the argument in errors ("questions[3].k"). */
  async plan(requests: readonly AskRequest[], defaultAsOf: Date, where: string): Promise<Asked[]> {
    if (requests.length > ASK_LIMITS.maxBatch) throw new AskInputError(where, `at most ${ASK_LIMITS.maxBatch} questions per batch, got ${requests.length}`);
    const snapshots = await this.options.snapshots.list();
    const first = snapshots[0];
    if (!first) throw new AskInputError(where, 'nothing has been ingested yet: load a snapshot first');
    const cutoff = this.options.cutoff ?? first.takenAt;
    const latest = snapshots[snapshots.length - 1]!;
    const snapshotDates = snapshots.map((snapshot) => snapshot.takenAt);
    // Keyed by status too: an article list read while a snapshot is still being ingested is partial.
    const subjects = await this.subjects(`${latest.id}:${latest.status}`);
    const checked = requests.map((request, index) => {
      const at = requests.length === 1 && where === 'ask' ? '' : `${where}[${index}].`;
      let generator: Generator;
      try {
        generator = this.options.generators.get(request.generator);
      } catch (error) {
        throw new AskInputError(`${at}generator`, (error as Error).message);
      }
      return { ...checkRequest(request, defaultAsOf, first.takenAt, at), generator };
    });
    const own = checked.map(({ question }) => analyseQuestion(question));
    const analyses = checked.map(({ turns }, index) => analyseInConversation(own[index]!, turns));
    // A bare follow-up ("And before that?") means what the turn before it asked.
    const meanings = checked.map(({ turns }, index) =>
      turns.length > 0 && own[index]!.terms.size === 0 ? analyseQuestion(turns.at(-1)!.question) : analyses[index]!,
    );
    const vectors = await this.options.reader.questionVectors(meanings);
    const planned = checked.map(({ question, asOf, turns }, index) => {
      const scope = readTimeScope(question, asOf);
      const summary = conversationSummary(turns);
      const linked = subjects.link(`${summary} ${question}`);
      const linkedWords = new Set(linked.flatMap((subject) => subject.words));
      const names = questionNames(analyses[index]!);
      const unknownNames = names.filter((name) => !name.split(' ').some((word) => linkedWords.has(word)));
      return { scope, plan: scopeInstants(scope, asOf, snapshotDates), summary, linked, names, unknownNames };
    });
    // A batch reads the store once per kind of read (and once per instant for change profiles), not once per question.
    const versions = await this.options.reads.factVersions([...new Set(planned.flatMap((p) => p.linked.map((subject) => subject.articleId)))]);
    const unheard = new Set(await this.options.retrieval.namesNeverMentioned([...new Set(planned.flatMap((p) => p.unknownNames))]));
    const instants = new Map<number, { at: Date; ids: Set<string> }>();
    for (const { plan, linked } of planned) {
      for (const at of plan.instants) {
        const entry = instants.get(at.getTime()) ?? { at, ids: new Set<string>() };
        for (const subject of linked) entry.ids.add(subject.articleId);
        instants.set(at.getTime(), entry);
      }
    }
    const profilesAt = new Map<number, Map<string, ChangeProfile>>();
    for (const [time, { at, ids }] of instants) {
      const window = at < cutoff ? { from: at, to: cutoff } : { from: cutoff, to: at };
      profilesAt.set(time, await this.options.answering.changeProfiles([...ids], window, at));
    }
    return Promise.all(
      checked.map(async ({ question, asOf, turns, mode, k, generator }, index): Promise<Asked> => {
        const analysis = analyses[index]!;
        const { scope, plan, summary, linked, names, unknownNames } = planned[index]!;
        const conversationEvidence = await this.evidenceOf(turns);
        // The turn's own words name the attribute when they can ("And the capital?"); a bare follow-up
        // ("And before that?") takes the earlier turn's too.
        const match = async (at: Date): Promise<FactMatch | null> => {
          const candidates = linked.map((subject) => ({ subject, facts: (versions.get(subject.articleId) ?? []).filter((fact) => isValidAt(fact, at)) }));
          const byOwnWords = await this.linker.match({ vector: vectors[index]!, terms: own[index]!.terms }, candidates);
          return byOwnWords ?? (turns.length > 0 ? this.linker.match({ vector: vectors[index]!, terms: analysis.terms }, candidates) : null);
        };
        const memoryFact = (await match(cutoff))?.fact ?? null;
        const jobs = await Promise.all(
          plan.instants.map(async (instant): Promise<Job> => {
            const profiles = profilesAt.get(instant.getTime())!;
            let factMatch = await match(instant);
            if (factMatch && analysis.asksForEarlier) {
              const previous = await this.options.answering.previousFact(factMatch.fact.id);
              factMatch = previous ? { ...factMatch, fact: previous } : null;
            }
            const asked = factMatch?.fact;
            let decision = decideRetrieval({
              question: analysis,
              asOf: instant,
              cutoff,
              subjects: linked,
              profiles,
              memoryFact: analysis.asksForEarlier ? null : memoryFact,
              generatorHasOwnKnowledge: generator.name !== 'extractive',
              unknownNames,
            });
            if (scope) decision = { ...decision, timeSensitive: true, cues: [scopeCue(scope, plan), ...decision.cues] };
            let evidence = conversationEvidence;
            if (turns.length > 0) {
              const continued = continuation(analysis, conversationEvidence, asked ?? null, (fact) => factEvidence(fact, 0));
              decision = continued.covered
                ? { ...decision, action: DecisionAction.CONTINUE_WITH_EVIDENCE, cues: [...continued.cues, ...decision.cues] }
                : {
                    ...decision,
                    action: DecisionAction.RETRIEVE,
                    cues: [...continued.cues, `retrieving with the conversation summary "${summary}"`, ...decision.cues],
                  };
              evidence = continued.evidence;
            }
            if (mode === RetrievalMode.NEVER) decision = { ...decision, action: DecisionAction.NO_RETRIEVE, cues: ['retrieval mode NEVER', ...decision.cues] };
            else if (mode !== RetrievalMode.ADAPTIVE)
              decision = { ...decision, action: DecisionAction.RETRIEVE, cues: [`retrieval mode ${mode}`, ...decision.cues] };
            return {
              question: analysis,
              vector: vectors[index]!,
              names,
              unheardOf: unknownNames.filter((name) => unheard.has(name)),
              query: turns.length > 0 ? `${summary} ${question}` : question,
              asOf: instant,
              mode,
              k,
              generator,
              subjects: linked,
              profiles,
              factMatch,
              formerValues: asked ? formerValues(versions.get(asked.subject) ?? [], asked, instant) : [],
              memoryFact,
              conversationEvidence: evidence,
              decision,
              rounds: [],
              candidates: [],
              chosen: null,
            };
          }),
        );
        return { question, asOf, scope, plan, jobs };
      }),
    );
  }

  private async evidenceOf(turns: readonly Turn[]): Promise<Evidence[]> {
    const ids = [...new Set(turns.flatMap((turn) => turn.evidenceIds ?? []))];
    if (ids.length === 0) return [];
    const [facts, sentences, passages] = await Promise.all([
      this.options.reads.factsByIds(ids),
      this.options.reads.sentencesByIds(ids),
      this.options.retrieval.unitsByIds(SearchUnit.PASSAGE, ids),
    ]);
    return ids.flatMap((id): Evidence[] => {
      const fact = facts.get(id);
      if (fact) return [factEvidence(fact, 0)];
      const unit = sentences.get(id) ?? passages.get(id);
      if (!unit) return [];
      const kind = sentences.has(id) ? EvidenceKind.SENTENCE : EvidenceKind.PASSAGE;
      return [documentEvidence({ kind, id, articleId: unit.articleId, text: unit.text, validFrom: unit.validFrom, validTo: unit.validTo })];
    });
  }

  private async subjects(version: string): Promise<SubjectIndex> {
    if (this.subjectIndex?.version !== version) {
      this.subjectIndex = { version, index: new SubjectIndex(await this.options.answering.articleTitles()) };
    }
    return this.subjectIndex.index;
  }

  /**
   * A question may name its subject in words no title holds ("the Red Devils", "the French
   * Senate"): for a question linked to no fact, the articles of its retrieved passages are
   * candidate subjects too.
   */
  async linkRetrievedSubjects(jobs: readonly Job[]): Promise<void> {
    const open = jobs.filter(
      (job) => job.factMatch === null && !job.question.asksForEarlier && job.mode !== RetrievalMode.ALWAYS && this.options.factCandidates !== false,
    );
    const articleIds = [...new Set(open.flatMap((job) => job.rounds[0]!.hits.map((hit) => hit.articleId)))];
    if (articleIds.length === 0) return;
    const versions = await this.options.reads.factVersions(articleIds);
    const index = this.subjectIndex!.index;
    await Promise.all(
      open.map(async (job) => {
        const named = new Set(job.subjects.map((subject) => subject.articleId));
        const candidates = [...new Set(job.rounds[0]!.hits.map((hit) => hit.articleId))]
          .filter((id) => !named.has(id))
          .flatMap((id) => {
            const subject = index.unnamed(id);
            return subject ? [{ subject, facts: (versions.get(id) ?? []).filter((fact) => isValidAt(fact, job.asOf)) }] : [];
          });
        job.factMatch = await this.linker.match({ vector: job.vector, terms: job.question.terms }, candidates);
        if (job.factMatch) job.formerValues = formerValues(versions.get(job.factMatch.fact.subject) ?? [], job.factMatch.fact, job.asOf);
      }),
    );
  }
}
