/**
 * The answering pipeline: the question's own time, the retrieval decision, hybrid retrieval
 * valid at the asked time, one candidate answer per document (the reader for passages, the
 * graph for the asked fact), the certainty gate, and adaptive re-retrieval (GrowOVER's RiLM +
 * ARR). A question about a period is answered at each instant where the store's versions can
 * differ in it, and the answers are merged. A batch is answered with one search, one generator
 * call, one gate call and one re-retrieval scan per round and instant.
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { AnsweringRepository } from '../graph/answeringRepository.js';
import type { ReadRepository } from '../graph/readRepository.js';
import type { SnapshotRepository } from '../graph/snapshotRepository.js';
import { queryTerms, SearchMode, SearchUnit } from '../retrieval/retriever.js';
import { type RetrievalService } from '../retrieval/retrievalService.js';
import { CertaintyGate, DEFAULT_GATE_PATH, gateFeatures } from './certaintyGate.js';
import { documentEvidence, factEvidence, hitEvidence } from './evidence.js';
import { GeneratorRegistry } from './generators/index.js';
import { QuestionPlanner, type Asked, type GatedCandidate, type Job } from './questionPlanner.js';
import type { SpanReader } from './reader/spanReader.js';
import { mergeScopedAnswers } from './scopedAnswers.js';
import { DecisionAction, EvidenceKind, RetrievalMode, type AnswerResult, type AskRequest, type Evidence, type StageTimings } from './types.js';

export { ASK_LIMITS, AskInputError, DEFAULT_K } from './askInput.js';
export { documentEvidence } from './evidence.js';
export type { GatedCandidate } from './questionPlanner.js';

export interface AskServiceOptions {
  reads: ReadRepository;
  answering: AnsweringRepository;
  snapshots: SnapshotRepository;
  retrieval: RetrievalService;
  /** The extractive reader; its encoder also embeds questions for linking them to facts. */
  reader: SpanReader;
  generators: GeneratorRegistry;
  /** Null runs without a gate (to collect training features); every candidate then has certainty null. */
  gate?: CertaintyGate | null;
  /** The generator's knowledge cutoff; default the earliest snapshot's date. */
  cutoff?: Date | null;
  /** Whether the asked fact joins the retrieved passages as a candidate (default true; false measures the text path alone). */
  factCandidates?: boolean;
}

const now = (): number => performance.now();

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

export class AskService {
  private readonly gate: CertaintyGate | null;
  private readonly planner: QuestionPlanner;

  constructor(private readonly options: AskServiceOptions) {
    // Until `chronoql train-gate` has written a model, answers are chosen without one and never adopted.
    this.gate = options.gate !== undefined ? options.gate : existsSync(DEFAULT_GATE_PATH()) ? CertaintyGate.load() : null;
    this.planner = new QuestionPlanner(options);
  }

  get lambda(): number | null {
    return this.gate?.lambda ?? null;
  }

  async ask(request: AskRequest, defaultAsOf: Date = new Date()): Promise<AnswerResult> {
    return (await this.batchAsk([request], defaultAsOf, 'ask'))[0]!;
  }

  /** Many questions, answers in input order. `where` names the argument in errors ("questions[3].k"). */
  async batchAsk(requests: readonly AskRequest[], defaultAsOf: Date = new Date(), where = 'questions'): Promise<AnswerResult[]> {
    const started = now();
    const timings = emptyTimings();
    const asked = await this.planner.plan(requests, defaultAsOf, where);
    timings.decisionMs = now() - started;
    await this.answer(
      asked.flatMap((a) => a.jobs),
      timings,
    );
    timings.totalMs = now() - started;
    return asked.map((a) => this.result(a, timings));
  }

  /** The first round of every question as GATED runs it, with each candidate's gate features: what `train-gate` learns from. */
  async firstRoundCandidates(requests: readonly AskRequest[], defaultAsOf: Date): Promise<GatedCandidate[][]> {
    const asked = await this.planner.plan(
      requests.map((r) => ({ ...r, retrieval: RetrievalMode.GATED })),
      defaultAsOf,
      'questions',
    );
    const jobs = asked.map((a) => a.jobs[a.jobs.length - 1]);
    await this.firstRound(
      jobs.filter((job): job is Job => job !== undefined),
      emptyTimings(),
    );
    return jobs.map((job) => job?.candidates ?? []);
  }

  private async answer(jobs: Job[], timings: StageTimings): Promise<void> {
    const closedBook = jobs.filter((job) => job.mode === RetrievalMode.NEVER || job.decision.action === DecisionAction.NO_RETRIEVE);
    const continuing = jobs.filter((job) => job.decision.action === DecisionAction.CONTINUE_WITH_EVIDENCE && !closedBook.includes(job));
    const retrieving = jobs.filter((job) => !closedBook.includes(job) && !continuing.includes(job));
    await this.answerClosedBook(closedBook, timings);
    for (const job of continuing) job.candidates = job.conversationEvidence.map((evidence) => blankCandidate(evidence));
    await this.generateAndGate(continuing, timings);
    for (const job of continuing) this.choose(job);
    await this.firstRound(retrieving, timings);
    for (const job of retrieving) this.choose(job);
    await this.reRetrieve(
      retrieving.filter((job) => (job.mode === RetrievalMode.RILM || job.mode === RetrievalMode.ADAPTIVE) && !this.adopted(job.chosen)),
      timings,
    );
  }

  /** The generator alone: an extractive generator remembers the fact as it stood at its cutoff, which the gate weighs as a fact. */
  private async answerClosedBook(jobs: Job[], timings: StageTimings): Promise<void> {
    const started = now();
    await Promise.all(
      [...groupBy(jobs, (job) => job.generator.name).values()].map(async (group) => {
        const memories = group.map((job) => (job.memoryFact ? factEvidence(job.memoryFact, 0) : null));
        const generations = await group[0]!.generator.generate(group.map((job, i) => ({ question: job.question, evidence: null, memory: memories[i] })));
        group.forEach((job, i) => {
          const { answer, confidence, score } = generations[i]!;
          job.chosen =
            memories[i] || answer
              ? { ...blankCandidate(memories[i] ?? closedBookEvidence(job)), answer, generatorConfidence: confidence, readerScore: score }
              : null;
          job.candidates = job.chosen ? [job.chosen] : [];
        });
      }),
    );
    timings.generationMs += now() - started;
    // NEVER is the generator-alone baseline: nothing from the graph may judge it.
    await this.gateCandidates(
      jobs.filter((job) => job.mode !== RetrievalMode.NEVER && job.memoryFact !== null),
      timings,
    );
  }

  private async firstRound(jobs: Job[], timings: StageTimings): Promise<void> {
    const started = now();
    for (const group of groupBy(jobs, (job) => `${job.asOf.toISOString()}|${job.k}`).values()) {
      const hits = await this.options.retrieval.batchSearch(
        group.map((job) => job.query),
        {
          asOf: group[0]!.asOf,
          k: group[0]!.k,
          mode: SearchMode.HYBRID,
          unit: SearchUnit.PASSAGE,
          queryVectors: group.map((job) => this.retrievalVector(job)),
        },
      );
      group.forEach((job, i) => job.rounds.push({ round: 1, query: job.query, omega: 0, hits: hits[i]!.map((hit) => hitEvidence(hit, 1)) }));
      await this.planner.linkRetrievedSubjects(group);
      for (const job of group) {
        // The RaLM baseline reads retrieved passages only; the gated modes also weigh the graph's fact.
        const withFact =
          job.factMatch && job.mode !== RetrievalMode.ALWAYS && this.options.factCandidates !== false ? [factEvidence(job.factMatch.fact, 1)] : [];
        job.candidates = [...job.rounds[0]!.hits, ...withFact].map((e) => blankCandidate(e));
      }
    }
    timings.retrievalMs += now() - started;
    await this.generateAndGate(jobs, timings);
  }

  /**
   * The question's vector from the reader, when it is exactly what the retriever would compute:
   * one encoder for both, a question searched as it stands (no conversation summary, not shortened).
   */
  private retrievalVector(job: Job): Float32Array | null {
    const shared = this.options.reader.encoderId === this.options.retrieval.embedderId;
    return shared && job.query === job.question.text && queryTerms(job.query) === job.query ? job.vector : null;
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
          questionVector: this.retrievalVector(job),
        })),
        group[0]!.asOf,
        group[0]!.k,
      );
      group.forEach((job, i) => {
        const evidence = hits[i]!.map((hit) => hitEvidence(hit, 2));
        job.rounds.push({ round: 2, query: `${job.question.text} : ${job.chosen?.answer ?? ''}`, omega: omegas[i]!, hits: evidence });
        job.candidates = [...job.candidates, ...evidence.map((e) => blankCandidate(e))];
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

  /** Generates every candidate still without an answer (of `round`, when given), then gates them all. */
  private async generateAndGate(jobs: Job[], timings: StageTimings, round?: number): Promise<void> {
    const started = now();
    const pending = jobs.flatMap((job) =>
      job.candidates.filter((c) => round === undefined || c.evidence.round === round).map((candidate) => ({ job, candidate })),
    );
    await Promise.all(
      [...groupBy(pending, (p) => p.job.generator.name).values()].map(async (group) => {
        const generations = await group[0]!.job.generator.generate(
          group.map(({ job, candidate }) => ({ question: job.question, evidence: candidate.evidence })),
        );
        group.forEach(({ candidate }, i) => {
          candidate.answer = generations[i]!.answer;
          candidate.generatorConfidence = generations[i]!.confidence;
          candidate.readerScore = generations[i]!.score;
        });
      }),
    );
    timings.generationMs += now() - started;
    await this.gateCandidates(jobs, timings);
  }

  /** The gate's features of every candidate (each seen beside the question's other candidates) and its certainties. */
  private async gateCandidates(jobs: Job[], timings: StageTimings): Promise<void> {
    const started = now();
    const all = jobs.flatMap((job) => job.candidates.map((candidate) => ({ job, candidate })));
    for (const { job, candidate } of all) {
      const others = job.candidates.filter((other) => other !== candidate);
      const readerScores = others.flatMap((other) => (other.readerScore === null ? [] : [other.readerScore]));
      const subject = job.subjects.find((s) => s.articleId === candidate.evidence.articleId);
      candidate.features = gateFeatures({
        question: job.question,
        names: job.names,
        evidence: candidate.evidence,
        answer: candidate.answer,
        generatorConfidence: candidate.generatorConfidence,
        readerScore: candidate.readerScore,
        otherReaderScore: readerScores.length === 0 ? null : Math.max(...readerScores),
        otherAnswers: others.map((other) => other.answer),
        factMatch: job.factMatch,
        formerValues: job.formerValues,
        subjectCoverage: subject?.coverage ?? 0,
        profile: job.profiles.get(candidate.evidence.articleId),
        asOf: job.asOf,
        timeSensitive: job.decision.timeSensitive,
        maxLexicalScore: Math.max(0, ...job.candidates.map((c) => c.evidence.lexicalScore ?? 0)),
      });
    }
    if (this.gate) {
      const certainties = await this.gate.score(all.map(({ candidate }) => candidate.features));
      all.forEach(({ candidate }, i) => {
        candidate.certainty = certainties[i]!;
      });
    }
    timings.gateMs += now() - started;
  }

  private choose(job: Job): void {
    job.chosen = job.mode === RetrievalMode.ALWAYS ? (job.candidates.find((c) => c.evidence.rank === 1) ?? null) : bestByReliability(job.candidates);
  }

  private adopted(candidate: GatedCandidate | null): boolean {
    return this.gate !== null && candidate !== null && candidate.answer !== '' && this.gate.adopts(candidate.evidence, candidate.certainty);
  }

  private result(asked: Asked, timings: StageTimings): AnswerResult {
    const { jobs, plan } = asked;
    if (jobs.length === 0) {
      const cues = [plan.note ?? 'nothing to answer from'];
      return {
        question: asked.question,
        text: null,
        guess: null,
        adopted: false,
        certainty: null,
        decision: { action: DecisionAction.NO_RETRIEVE, timeSensitive: true, cues, changedSince: [] },
        candidates: [],
        rounds: [],
        asOf: asked.asOf,
        timeScope: asked.scope,
        otherAnswers: [],
        generator: '',
        timings: { ...timings },
      };
    }
    const answers = jobs.map((job) => ({
      instant: job.asOf,
      guess: job.chosen?.answer || null,
      adopted: this.adopted(job.chosen),
      certainty: job.chosen?.certainty ?? null,
      evidence: job.chosen?.evidence ?? null,
    }));
    const end = asked.scope?.to && asked.scope.to < asked.asOf ? asked.scope.to : asked.asOf;
    const { main, others } = jobs.length > 1 ? mergeScopedAnswers(answers, end, plan.main) : { main: 0, others: [] };
    const job = jobs[main]!;
    const chosen = job.chosen;
    // An answer about something the store has never heard of is not adopted, however sure the gate is.
    const strangers = job.unheardOf;
    const adopted = this.adopted(chosen) && strangers.length === 0;
    const rest = job.candidates.filter((c) => c !== chosen).sort((a, b) => (b.certainty?.reliable ?? 0) - (a.certainty?.reliable ?? 0));
    const guess = chosen?.answer || null;
    const cues = adopted || guess === null ? job.decision.cues : [abstention(chosen!, this.gate, strangers), ...job.decision.cues];
    return {
      question: asked.question,
      text: adopted ? guess : null,
      guess,
      adopted,
      certainty: chosen?.certainty ?? null,
      decision: { ...job.decision, cues },
      candidates: (chosen ? [chosen, ...rest] : rest).map(({ features: _features, readerScore: _score, ...candidate }) => candidate),
      rounds: job.rounds,
      asOf: asked.asOf,
      timeScope: asked.scope,
      otherAnswers: others,
      generator: job.generator.name,
      timings: { ...timings },
    };
  }
}

/** Why the best guess is not adopted. */
function abstention(chosen: GatedCandidate, gate: CertaintyGate | null, strangers: readonly string[]): string {
  if (strangers.length > 0)
    return `not adopted: the store knows nothing about ${strangers.map((name) => `"${name}"`).join(', ')}; "${chosen.answer}" is the best guess`;
  if (gate === null) return 'not adopted: no certainty gate is trained (chronoql train-gate)';
  if (chosen.certainty === null) return 'not adopted: the answer comes from the generator alone, which the gate does not score';
  return `not adopted: p(reliable) ${chosen.certainty.reliable.toFixed(2)} is below ${gate.threshold(chosen.evidence).toFixed(2)}, where answers from ${chosen.evidence.kind === EvidenceKind.FACT ? 'facts' : 'text'} are adopted; "${chosen.answer}" is the best guess`;
}

function blankCandidate(evidence: Evidence): GatedCandidate {
  return { evidence, answer: '', generatorConfidence: 0, certainty: null, features: [], readerScore: null };
}

/** A closed-book answer from a generator's own knowledge has no document; it is shown as of the generator's knowledge. */
function closedBookEvidence(job: Job): Evidence {
  return documentEvidence({
    kind: EvidenceKind.FACT,
    id: `closed-book:${job.generator.name}`,
    articleId: '',
    text: `${job.generator.name} without retrieval`,
    validFrom: job.asOf,
    validTo: null,
  });
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
