/**
 * The answering pipeline: retrieval decision, hybrid retrieval valid at asOf, one candidate
 * answer per document, the certainty gate, and adaptive re-retrieval (GrowOVER's RiLM + ARR).
 * A batch is answered with one search, one generator call, one gate call and one re-retrieval
 * scan per round and asOf.
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { AnsweringRepository, ChangeProfile } from '../graph/answeringRepository.js';
import type { FactRecord } from '../graph/model.js';
import type { ReadRepository } from '../graph/readRepository.js';
import type { SnapshotRepository } from '../graph/snapshotRepository.js';
import { isoDay } from '../graph/temporal.js';
import { SearchMode, SearchUnit, type RetrievalService, type SearchHit } from '../retrieval/retrievalService.js';
import { CertaintyGate, DEFAULT_GATE_PATH, gateFeatures, predictedClass } from './certaintyGate.js';
import { decideRetrieval } from './decision.js';
import { GeneratorRegistry, type Generator } from './generators/index.js';
import { analyseQuestion, type QuestionAnalysis } from './question.js';
import { matchFact, SubjectIndex, type LinkedSubject } from './subjects.js';
import { annotate, AnswerType, candidateSpans } from '../text/annotation.js';
import {
  DecisionAction,
  EvidenceKind,
  RetrievalMode,
  type AnswerResult,
  type AskRequest,
  type Decision,
  type Evidence,
  type RetrievalRound,
  type ScoredCandidate,
  type StageTimings,
  type Turn,
} from './types.js';

export const ASK_LIMITS = { maxQuestionLength: 2000, maxTurns: 20, maxEvidenceIdsPerTurn: 50, minK: 1, maxK: 50, maxBatch: 256 } as const;
export const DEFAULT_K = 3;

export class AskInputError extends Error {
  readonly code = 'BAD_USER_INPUT';

  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(`${argument}: ${message}`);
  }
}

export interface AskServiceOptions {
  reads: ReadRepository;
  answering: AnsweringRepository;
  snapshots: SnapshotRepository;
  retrieval: RetrievalService;
  generators?: GeneratorRegistry;
  /** Null runs without a gate (to collect training features); every candidate then has certainty null. */
  gate?: CertaintyGate | null;
  /** The generator's knowledge cutoff; default the earliest snapshot's date. */
  cutoff?: Date | null;
  /** Whether the asked fact joins the retrieved passages as a candidate (default true; false measures the text path alone). */
  factCandidates?: boolean;
}

/** A candidate with the gate's feature row (kept for training the gate). */
export interface GatedCandidate extends ScoredCandidate {
  features: number[];
}

/** One question on its way through the pipeline. */
interface Job {
  index: number;
  question: QuestionAnalysis;
  query: string;
  asOf: Date;
  mode: RetrievalMode;
  k: number;
  generator: Generator;
  subjects: LinkedSubject[];
  profiles: Map<string, ChangeProfile>;
  currentFact: FactRecord | null;
  memoryFact: FactRecord | null;
  conversationEvidence: Evidence[];
  decision: Decision;
  rounds: RetrievalRound[];
  candidates: GatedCandidate[];
  chosen: GatedCandidate | null;
}

const now = (): number => performance.now();

/** A document as evidence; what no retrieval round gave it (value, row, rank, scores) is null, its round 0. */
export function documentEvidence(fields: Pick<Evidence, 'kind' | 'id' | 'articleId' | 'text' | 'validFrom' | 'validTo'> & Partial<Evidence>): Evidence {
  return { value: null, rowId: null, round: 0, rank: null, denseScore: null, lexicalScore: null, fusedScore: null, ...fields };
}

function factEvidence(fact: FactRecord, round: number): Evidence {
  const { id, subject, attribute, value, validFrom, validTo } = fact;
  return documentEvidence({ kind: EvidenceKind.FACT, id, articleId: subject, text: `${subject} · ${attribute}: ${value}`, value, validFrom, validTo, round });
}

function hitEvidence(hit: SearchHit, round: number): Evidence {
  return documentEvidence({
    kind: hit.unit === SearchUnit.SENTENCE ? EvidenceKind.SENTENCE : EvidenceKind.PASSAGE,
    id: hit.id,
    articleId: hit.articleId,
    text: hit.text,
    validFrom: hit.validFrom,
    validTo: hit.validTo,
    rowId: hit.rowId,
    round,
    rank: hit.rank,
    denseScore: hit.denseScore,
    lexicalScore: hit.lexicalScore,
    fusedScore: hit.score,
  });
}

/** Salient names and noun phrases of a conversation's earlier turns: what a follow-up refers back to. */
function conversationSummary(turns: readonly Turn[]): string {
  const phrases = new Set<string>();
  for (const turn of turns) {
    for (const text of [turn.question, turn.answer ?? '']) {
      annotate(text).forEach((sentence, s) => {
        for (const span of candidateSpans(sentence, s)) if (span.form === 'whole' && (span.types.has(AnswerType.NAME) || span.types.has(AnswerType.THING))) phrases.add(span.text);
      });
    }
  }
  return [...phrases].join(' ');
}

/** The question read together with the conversation: its words, and the earlier turn's answer type for a fragment ("And before that?"). */
function analyseInConversation(question: string, turns: readonly Turn[]): QuestionAnalysis {
  const analysis = analyseQuestion(question);
  if (turns.length === 0) return analysis;
  const previous = analyseQuestion(turns[turns.length - 1]!.question);
  const hasWhWord = /\b(who|whom|whose|what|which|when|where|how)\b/i.test(question);
  return {
    ...analysis,
    answerType: hasWhWord ? analysis.answerType : previous.answerType,
    terms: new Set([...previous.terms, ...analysis.terms]),
  };
}

/** Two versions of one fact: their ids differ only in the snapshot part (`subject#attribute#snapshot`). */
function sameFact(a: string, b: string): boolean {
  return a.slice(0, a.lastIndexOf('#')) === b.slice(0, b.lastIndexOf('#'));
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

export class AskService {
  private readonly generators: GeneratorRegistry;
  private readonly gate: CertaintyGate | null;
  private subjectIndex: { version: string; index: SubjectIndex } | null = null;

  constructor(private readonly options: AskServiceOptions) {
    this.generators = options.generators ?? new GeneratorRegistry();
    // Until `chronoql train-gate` has written a model, answers are chosen without one and never adopted.
    this.gate = options.gate !== undefined ? options.gate : existsSync(DEFAULT_GATE_PATH()) ? CertaintyGate.load() : null;
  }

  get lambda(): number | null {
    return this.gate?.lambda ?? null;
  }

  async ask(request: AskRequest, defaultAsOf: Date = new Date()): Promise<AnswerResult> {
    return (await this.batchAsk([request], defaultAsOf, 'ask'))[0]!;
  }

  /** Many questions, answers in input order. `where` names the argument in errors ("questions[3].k"). */
  async batchAsk(requests: readonly AskRequest[], defaultAsOf: Date = new Date(), where = 'questions'): Promise<AnswerResult[]> {
    return (await this.run(requests, defaultAsOf, where)).map((job) => job.result);
  }

  /** The first round of every question as GATED runs it, with each candidate's gate features: what `train-gate` learns from. */
  async firstRoundCandidates(requests: readonly AskRequest[], defaultAsOf: Date): Promise<Array<{ candidates: GatedCandidate[]; currentFact: FactRecord | null }>> {
    const jobs = await this.prepare(requests.map((r) => ({ ...r, retrieval: RetrievalMode.GATED })), defaultAsOf, 'questions');
    const timings = emptyTimings();
    await this.firstRound(jobs, timings);
    return jobs.map((job) => ({ candidates: job.candidates, currentFact: job.currentFact }));
  }

  private async run(requests: readonly AskRequest[], defaultAsOf: Date, where: string): Promise<Array<{ result: AnswerResult }>> {
    const started = now();
    const timings = emptyTimings();
    const jobs = await this.prepare(requests, defaultAsOf, where);
    timings.decisionMs = now() - started;

    const closedBook = jobs.filter((job) => job.mode === RetrievalMode.NEVER || job.decision.action === DecisionAction.NO_RETRIEVE);
    const continuing = jobs.filter((job) => job.decision.action === DecisionAction.CONTINUE_WITH_EVIDENCE && !closedBook.includes(job));
    const retrieving = jobs.filter((job) => !closedBook.includes(job) && !continuing.includes(job));

    await this.answerClosedBook(closedBook, timings);
    for (const job of continuing) job.candidates = job.conversationEvidence.map((evidence) => this.blankCandidate(evidence));
    await this.generateAndGate(continuing, timings);
    for (const job of continuing) this.choose(job);
    await this.firstRound(retrieving, timings);
    for (const job of retrieving) this.choose(job);
    await this.reRetrieve(
      retrieving.filter((job) => (job.mode === RetrievalMode.RILM || job.mode === RetrievalMode.ADAPTIVE) && !this.adopted(job.chosen)),
      timings,
    );
    timings.totalMs = now() - started;
    return jobs.map((job) => ({ result: this.result(job, timings) }));
  }

  private async prepare(requests: readonly AskRequest[], defaultAsOf: Date, where: string): Promise<Job[]> {
    if (requests.length > ASK_LIMITS.maxBatch) throw new AskInputError(where, `at most ${ASK_LIMITS.maxBatch} questions per batch, got ${requests.length}`);
    const snapshots = await this.options.snapshots.list();
    const first = snapshots[0];
    if (!first) throw new AskInputError(where, 'nothing has been ingested yet: load a snapshot first');
    const cutoff = this.options.cutoff ?? first.takenAt;
    const latest = snapshots[snapshots.length - 1]!;
    // Keyed by status too: an article list read while a snapshot is still being ingested is partial.
    const subjects = await this.subjects(`${latest.id}:${latest.status}`);
    return Promise.all(
      requests.map(async (request, index) => {
        const at = requests.length === 1 && where === 'ask' ? '' : `${where}[${index}].`;
        const { question, asOf, turns, mode, k } = validate(request, defaultAsOf, first.takenAt, at);
        const analysis = analyseInConversation(question, turns);
        const summary = conversationSummary(turns);
        const linked = subjects.link(`${summary} ${question}`);
        const articleIds = linked.map((subject) => subject.articleId);
        let generator: Generator;
        try {
          generator = this.generators.get(request.generator);
        } catch (error) {
          throw new AskInputError(`${at}generator`, (error as Error).message);
        }
        const window = asOf < cutoff ? { from: asOf, to: cutoff } : { from: cutoff, to: asOf };
        const [factsNow, factsAtCutoff, profiles, conversationEvidence] = await Promise.all([
          this.options.reads.factsValidAt(articleIds, asOf),
          this.options.reads.factsValidAt(articleIds, cutoff),
          this.options.answering.changeProfiles(articleIds, window, asOf),
          this.evidenceOf(turns),
        ]);
        // The turn's own words name the attribute when they can ("And the capital?"); a bare follow-up
        // ("And before that?") takes the earlier turn's.
        const ownTerms = turns.length > 0 ? analyseQuestion(question).terms : analysis.terms;
        const askedFact = (facts: FactRecord[]): FactRecord | null => matchFact(facts, ownTerms) ?? matchFact(facts, analysis.terms);
        let currentFact = askedFact(articleIds.flatMap((id) => factsNow.get(id) ?? []));
        if (currentFact && analysis.asksForEarlier) currentFact = await this.options.answering.previousFact(currentFact.id);
        const memoryFact = askedFact(articleIds.flatMap((id) => factsAtCutoff.get(id) ?? []));
        const titles = new Set(linked.flatMap((subject) => subject.title.toLowerCase().split(/\s+/)));
        const unknownNames = analysis.tokens.filter((token, i) => i > 0 && token.pos === 'PROPN' && !titles.has(token.lower)).map((token) => token.text);
        let decision = decideRetrieval({
          question: analysis,
          asOf,
          cutoff,
          subjects: linked,
          profiles,
          memoryFact: analysis.asksForEarlier ? null : memoryFact,
          generatorHasOwnKnowledge: generator.name !== 'extractive',
          unknownNames,
        });
        let evidence = conversationEvidence;
        if (turns.length > 0) {
          const continued = this.continuation(analysis, conversationEvidence, currentFact);
          decision = continued.covered
            ? { ...decision, action: DecisionAction.CONTINUE_WITH_EVIDENCE, cues: [...continued.cues, ...decision.cues] }
            : { ...decision, action: DecisionAction.RETRIEVE, cues: [...continued.cues, `retrieving with the conversation summary "${summary}"`, ...decision.cues] };
          evidence = continued.evidence;
        }
        if (mode === RetrievalMode.NEVER) decision = { ...decision, action: DecisionAction.NO_RETRIEVE, cues: ['retrieval mode NEVER', ...decision.cues] };
        else if (mode !== RetrievalMode.ADAPTIVE) decision = { ...decision, action: DecisionAction.RETRIEVE, cues: [`retrieval mode ${mode}`, ...decision.cues] };
        const job: Job = {
          index,
          question: { ...analysis, text: question },
          query: turns.length > 0 ? `${summary} ${question}` : question,
          asOf,
          mode,
          k,
          generator,
          subjects: linked,
          profiles,
          currentFact,
          memoryFact,
          conversationEvidence: evidence,
          decision,
          rounds: [],
          candidates: [],
          chosen: null,
        };
        return job;
      }),
    );
  }

  /**
   * Whether a conversation's earlier evidence answers the new turn: a fact it holds is the one
   * asked (or, for "before that", the graph's previous version of it), or its passages hold the
   * turn's words and a span of the expected answer type.
   */
  private continuation(question: QuestionAnalysis, evidence: Evidence[], currentFact: FactRecord | null): { covered: boolean; evidence: Evidence[]; cues: string[] } {
    if (evidence.length === 0) return { covered: false, evidence, cues: ['no evidence from earlier turns'] };
    const facts = evidence.filter((e) => e.kind === EvidenceKind.FACT);
    if (currentFact && facts.some((fact) => sameFact(fact.id, currentFact.id))) {
      const cue = question.asksForEarlier ? `earlier turns' fact has a previous version: ${currentFact.value}` : `earlier turns' evidence holds ${currentFact.attribute}`;
      return { covered: true, evidence: [factEvidence(currentFact, 0), ...evidence.filter((e) => e.kind !== EvidenceKind.FACT)], cues: [cue] };
    }
    if (currentFact) return { covered: false, evidence, cues: [`asks for ${currentFact.attribute} of ${currentFact.subject}, which the earlier evidence does not hold`] };
    let best = 0;
    let typed = false;
    for (const item of evidence.filter((e) => e.kind !== EvidenceKind.FACT)) {
      const sentences = annotate(item.text);
      const stems = new Set(sentences.flatMap((s) => s.tokens.map((t) => t.stem)));
      const held = question.terms.size === 0 ? 0 : [...question.terms].filter((term) => stems.has(term)).length / question.terms.size;
      best = Math.max(best, held);
      typed ||= sentences.some((sentence, s) => candidateSpans(sentence, s).some((span) => span.types.has(question.answerType)));
    }
    const covered = best >= 0.6 && typed && !question.asksForEarlier;
    return { covered, evidence, cues: [`earlier evidence covers ${Math.round(best * 100)}% of the turn's words${typed ? '' : ', with no answer of the expected type'}`] };
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

  private async answerClosedBook(jobs: Job[], timings: StageTimings): Promise<void> {
    const started = now();
    await Promise.all(
      [...groupBy(jobs, (job) => job.generator.name).values()].map(async (group) => {
        const generations = await group[0]!.generator.generate(
          group.map((job) => ({ question: job.question, evidence: null, memory: job.memoryFact ? factEvidence(job.memoryFact, 0) : null })),
        );
        group.forEach((job, i) => {
          const memory = job.memoryFact ? factEvidence(job.memoryFact, 0) : null;
          job.chosen = memory || generations[i]!.answer ? { ...this.blankCandidate(memory ?? closedBookEvidence(job)), answer: generations[i]!.answer, generatorConfidence: generations[i]!.confidence } : null;
          job.candidates = job.chosen ? [job.chosen] : [];
        });
      }),
    );
    timings.generationMs += now() - started;
  }

  private async firstRound(jobs: Job[], timings: StageTimings): Promise<void> {
    const started = now();
    for (const group of groupBy(jobs, (job) => `${job.asOf.toISOString()}|${job.k}`).values()) {
      const hits = await this.options.retrieval.batchSearch(
        group.map((job) => job.query),
        { asOf: group[0]!.asOf, k: group[0]!.k, mode: SearchMode.HYBRID, unit: SearchUnit.PASSAGE },
      );
      group.forEach((job, i) => {
        const evidence = hits[i]!.map((hit) => hitEvidence(hit, 1));
        job.rounds.push({ round: 1, query: job.query, omega: 0, hits: evidence });
        // The RaLM baseline reads retrieved passages only; the gated modes also weigh the graph's fact.
        const withFact = job.currentFact && job.mode !== RetrievalMode.ALWAYS && this.options.factCandidates !== false ? [factEvidence(job.currentFact, 1)] : [];
        job.candidates = [...evidence, ...withFact].map((e) => this.blankCandidate(e));
      });
    }
    timings.retrievalMs += now() - started;
    await this.generateAndGate(jobs, timings);
  }

  private async reRetrieve(jobs: Job[], timings: StageTimings): Promise<void> {
    if (jobs.length === 0 || this.gate === null) return;
    const started = now();
    const firstBest = new Map(jobs.map((job) => [job, job.chosen]));
    for (const group of groupBy(jobs, (job) => `${job.asOf.toISOString()}|${job.k}`).values()) {
      const omegas = group.map((job) => Math.min(1, Math.max(0, this.gate!.lambda * (job.chosen?.certainty?.reliable ?? 0))));
      const hits = await this.options.retrieval.reRetrieve(
        group.map((job, i) => ({
          question: job.question.text,
          answer: job.chosen?.answer ?? '',
          omega: omegas[i]!,
          excludeRowIds: job.rounds[0]!.hits.flatMap((hit) => (hit.rowId === null ? [] : [hit.rowId])),
        })),
        group[0]!.asOf,
        group[0]!.k,
      );
      group.forEach((job, i) => {
        const evidence = hits[i]!.map((hit) => hitEvidence(hit, 2));
        job.rounds.push({ round: 2, query: `${job.question.text} : ${job.chosen?.answer ?? ''}`, omega: omegas[i]!, hits: evidence });
        job.candidates = [...job.candidates, ...evidence.map((e) => this.blankCandidate(e))];
      });
    }
    timings.reRetrievalMs += now() - started;
    await this.generateAndGate(jobs, timings, 2);
    for (const job of jobs) {
      const secondBest = bestByReliability(job.candidates.filter((c) => c.evidence.round === 2));
      const first = firstBest.get(job) ?? null;
      job.chosen = secondBest && (first === null || (secondBest.certainty?.reliable ?? 0) > (first.certainty?.reliable ?? 0)) ? secondBest : first;
    }
  }

  /** Generates and gates every candidate still without an answer (of `round`, when given). */
  private async generateAndGate(jobs: Job[], timings: StageTimings, round?: number): Promise<void> {
    let started = now();
    const pending = jobs.flatMap((job) => job.candidates.filter((c) => round === undefined || c.evidence.round === round).map((candidate) => ({ job, candidate })));
    await Promise.all(
      [...groupBy(pending, (p) => p.job.generator.name).values()].map(async (group) => {
        const generations = await group[0]!.job.generator.generate(group.map(({ job, candidate }) => ({ question: job.question, evidence: candidate.evidence })));
        group.forEach(({ candidate }, i) => {
          candidate.answer = generations[i]!.answer;
          candidate.generatorConfidence = generations[i]!.confidence;
        });
      }),
    );
    timings.generationMs += now() - started;
    started = now();
    for (const { job, candidate } of pending) {
      const maxLexicalScore = Math.max(0, ...job.candidates.map((c) => c.evidence.lexicalScore ?? 0));
      candidate.features = gateFeatures({
        question: job.question,
        evidence: candidate.evidence,
        answer: candidate.answer,
        generatorConfidence: candidate.generatorConfidence,
        currentFact: job.currentFact,
        profile: job.profiles.get(candidate.evidence.articleId),
        asOf: job.asOf,
        timeSensitive: job.decision.timeSensitive,
        maxLexicalScore,
      });
    }
    if (this.gate) {
      const certainties = await this.gate.score(pending.map(({ candidate }) => candidate.features));
      pending.forEach(({ candidate }, i) => {
        candidate.certainty = certainties[i]!;
      });
    }
    timings.gateMs += now() - started;
  }

  private choose(job: Job): void {
    job.chosen =
      job.mode === RetrievalMode.ALWAYS
        ? (job.candidates.find((c) => c.evidence.rank === 1) ?? null)
        : (bestByReliability(job.candidates) ?? null);
  }

  private adopted(candidate: GatedCandidate | null): boolean {
    return candidate?.certainty ? predictedClass(candidate.certainty) === 'reliable' : false;
  }

  private blankCandidate(evidence: Evidence): GatedCandidate {
    return { evidence, answer: '', generatorConfidence: 0, certainty: null, features: [] };
  }

  private result(job: Job, timings: StageTimings): AnswerResult {
    const chosen = job.chosen;
    const others = job.candidates.filter((c) => c !== chosen).sort((a, b) => (b.certainty?.reliable ?? 0) - (a.certainty?.reliable ?? 0));
    return {
      question: job.question.text,
      text: chosen?.answer ?? '',
      adopted: this.adopted(chosen),
      certainty: chosen?.certainty ?? null,
      decision: job.decision,
      candidates: (chosen ? [chosen, ...others] : others).map(({ features: _features, ...candidate }) => candidate),
      rounds: job.rounds,
      asOf: job.asOf,
      generator: job.generator.name,
      timings: { ...timings },
    };
  }
}

/** A closed-book answer from a generator's own knowledge has no document; it is shown as of the generator's knowledge. */
function closedBookEvidence(job: Job): Evidence {
  return documentEvidence({ kind: EvidenceKind.FACT, id: `closed-book:${job.generator.name}`, articleId: '', text: `${job.generator.name} without retrieval`, validFrom: job.asOf, validTo: null });
}

function bestByReliability(candidates: readonly GatedCandidate[]): GatedCandidate | null {
  let best: GatedCandidate | null = null;
  for (const candidate of candidates) {
    if (candidate.answer === '') continue;
    if (best === null || (candidate.certainty?.reliable ?? 0) > (best.certainty?.reliable ?? 0)) best = candidate;
  }
  return best;
}

function emptyTimings(): StageTimings {
  return { decisionMs: 0, retrievalMs: 0, generationMs: 0, gateMs: 0, reRetrievalMs: 0, totalMs: 0 };
}

function validate(
  request: AskRequest,
  defaultAsOf: Date,
  firstSnapshotAt: Date,
  at: string,
): { question: string; asOf: Date; turns: readonly Turn[]; mode: RetrievalMode; k: number } {
  const question = request.question?.trim() ?? '';
  if (question === '') throw new AskInputError(`${at}question`, 'must not be empty');
  if (question.length > ASK_LIMITS.maxQuestionLength) throw new AskInputError(`${at}question`, `must be at most ${ASK_LIMITS.maxQuestionLength} characters, got ${question.length}`);
  const k = request.k ?? DEFAULT_K;
  if (!Number.isInteger(k) || k < ASK_LIMITS.minK || k > ASK_LIMITS.maxK) throw new AskInputError(`${at}k`, `must be between ${ASK_LIMITS.minK} and ${ASK_LIMITS.maxK}, got ${k}`);
  const asOf = request.asOf ?? defaultAsOf;
  if (asOf.getTime() < firstSnapshotAt.getTime()) {
    throw new AskInputError(`${at}asOf`, `${asOf.toISOString()} is before the first snapshot (${isoDay(firstSnapshotAt)}): nothing is known then`);
  }
  const turns = request.conversation ?? [];
  if (turns.length > ASK_LIMITS.maxTurns) throw new AskInputError(`${at}conversation`, `at most ${ASK_LIMITS.maxTurns} turns, got ${turns.length}`);
  turns.forEach((turn, t) => {
    if (turn.question.trim() === '') throw new AskInputError(`${at}conversation[${t}].question`, 'must not be empty');
    if (turn.question.length > ASK_LIMITS.maxQuestionLength) throw new AskInputError(`${at}conversation[${t}].question`, `must be at most ${ASK_LIMITS.maxQuestionLength} characters`);
    if ((turn.answer ?? '').length > ASK_LIMITS.maxQuestionLength) throw new AskInputError(`${at}conversation[${t}].answer`, `must be at most ${ASK_LIMITS.maxQuestionLength} characters`);
    if ((turn.evidenceIds ?? []).length > ASK_LIMITS.maxEvidenceIdsPerTurn) {
      throw new AskInputError(`${at}conversation[${t}].evidenceIds`, `at most ${ASK_LIMITS.maxEvidenceIdsPerTurn} ids per turn, got ${turn.evidenceIds!.length}`);
    }
  });
  return { question, asOf, turns, mode: request.retrieval ?? RetrievalMode.ADAPTIVE, k };
}
