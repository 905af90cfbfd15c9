/**
 * The answering pipeline (GrowOVER's RiLM + ARR, with RetrievalQA's retrieval decision made
 * time- and change-aware by the graph), as plain stages: plan each question (planning.ts), gather
 * evidence, read a candidate answer from each document, gate the candidates by certainty,
 * re-retrieve when none is trusted (attempts.ts), and answer (answerResult.ts). A question about
 * a period is answered at each instant where the store's versions can differ in it, and the
 * answers are merged. A batch is answered with one search, one generator call, one gate call and
 * one re-retrieval scan per round and instant.
 */
import { performance } from 'node:perf_hooks';
import { checkRequestDeadline } from '../platform/requestScope.js';
import { answerOf } from './answerResult.js';
import {
  answerClosedBook,
  attemptOf,
  blankCandidate,
  choose,
  firstRound,
  firstRoundAttempt,
  gateCandidates,
  isAdopted,
  readCandidates,
  reRetrieve,
  type Attempt,
  type GatedCandidate,
} from './attempts.js';
import { withPagePassages, chooseReading, focusedOnClockFact, readPeriods } from './periodReading.js';
import { QuestionPlanner, type InstantPlan } from './planning.js';
import type { AnsweringPorts, Gate } from './ports.js';
import { gateReadings, readingFeatures } from './readingGate.js';
import { DecisionAction, RetrievalMode, type AnswerResult, type AskRequest, type StageTimings } from './types.js';

export { ASK_LIMITS, AskInputError, DEFAULT_K } from './askInput.js';
export { documentEvidence } from './evidence.js';
export type { GatedCandidate } from './attempts.js';

function emptyTimings(): StageTimings {
  return { decisionMs: 0, retrievalMs: 0, generationMs: 0, gateMs: 0, reRetrievalMs: 0, totalMs: 0 };
}

/** Runs a stage, adding its wall time to one of the timings, and stops a request that ran past its deadline before the next. */
async function timed<T>(timings: StageTimings, stage: keyof StageTimings, run: () => Promise<T>): Promise<T> {
  checkRequestDeadline();
  const started = performance.now();
  try {
    return await run();
  } finally {
    timings[stage] += performance.now() - started;
  }
}

export class AskService {
  private readonly planner: QuestionPlanner;

  constructor(private readonly ports: AnsweringPorts) {
    this.planner = new QuestionPlanner(ports);
  }

  get lambda(): number | null {
    return this.ports.gate?.lambda ?? null;
  }

  async ask(request: AskRequest, defaultAsOf: Date = new Date()): Promise<AnswerResult> {
    return (await this.batchAsk([request], defaultAsOf, 'ask'))[0]!;
  }

  /** Many questions, answers in input order. `where` names the argument in errors ("questions[3].k"). */
  async batchAsk(requests: readonly AskRequest[], defaultAsOf: Date = new Date(), where = 'questions'): Promise<AnswerResult[]> {
    const timings = emptyTimings();
    const started = performance.now();
    const asked = await timed(timings, 'decisionMs', () => this.planner.plan(requests, defaultAsOf, where));
    const attempts = await this.answer(
      asked.flatMap((question) => question.plans),
      timings,
    );
    let next = 0;
    const clockAttempts = asked.map((question) => attempts.slice(next, (next += question.plans.length)));
    const fromText = await this.answerFromText(
      asked.flatMap((question, i) => (question.textPlan ? [focusedOnClockFact(question.textPlan, clockAttempts[i]!)] : [])),
      timings,
    );
    timings.totalMs = performance.now() - started;
    let nextText = 0;
    const gates = { clock: this.ports.gate, text: this.textGate };
    return asked.map((question, i) => answerOf(question, clockAttempts[i]!, question.textPlan ? fromText[nextText++]! : null, gates, timings));
  }

  /** The first round of every question as GATED runs it, with each candidate's gate features: what `train-gate` learns from. */
  async firstRoundCandidates(requests: readonly AskRequest[], defaultAsOf: Date): Promise<GatedCandidate[][]> {
    const asked = await this.planner.plan(
      requests.map((r) => ({ ...r, retrieval: RetrievalMode.GATED })),
      defaultAsOf,
      'questions',
    );
    const last = asked.map((question) => question.plans.at(-1));
    const attempts = await this.retrieveAndRead(
      last.filter((plan): plan is InstantPlan => plan !== undefined),
      emptyTimings(),
    );
    let next = 0;
    return last.map((plan) => (plan ? [...attempts[next++]!.candidates] : []));
  }

  /** Every plan answered, in order: closed book, from the conversation's evidence, or with retrieval (and re-retrieval). */
  private async answer(plans: readonly InstantPlan[], timings: StageTimings): Promise<Attempt[]> {
    const closedBook = (plan: InstantPlan): boolean => plan.mode === RetrievalMode.NEVER || plan.decision.action === DecisionAction.NO_RETRIEVE;
    const continuing = (plan: InstantPlan): boolean => !closedBook(plan) && plan.decision.action === DecisionAction.CONTINUE_WITH_EVIDENCE;
    const retrieving = (plan: InstantPlan): boolean => !closedBook(plan) && !continuing(plan);
    const out = new Array<Attempt>(plans.length);
    /** Runs `stage` on the plans `which` picks and puts its attempts in their places. */
    const answerThose = async (which: (plan: InstantPlan) => boolean, stage: (picked: InstantPlan[]) => Promise<Attempt[]>): Promise<void> => {
      const at = plans.flatMap((plan, i) => (which(plan) ? [i] : []));
      const attempts = await stage(at.map((i) => plans[i]!));
      at.forEach((i, n) => (out[i] = attempts[n]!));
    };
    await answerThose(closedBook, (picked) => timed(timings, 'generationMs', () => answerClosedBook(picked, this.ports.gate)));
    await answerThose(continuing, async (picked) =>
      (
        await this.readAndGate(
          picked.map((plan) =>
            attemptOf(
              plan,
              plan.conversationEvidence.map((evidence) => blankCandidate(evidence)),
            ),
          ),
          timings,
        )
      ).map(choose),
    );
    await answerThose(retrieving, async (picked) => {
      const chosen = (await this.retrieveAndRead(picked, timings)).map(choose);
      const again = chosen.flatMap((attempt, i) =>
        (attempt.plan.mode === RetrievalMode.RILM || attempt.plan.mode === RetrievalMode.ADAPTIVE) && !isAdopted(this.ports.gate, attempt.chosen) ? [i] : [],
      );
      const retried = await timed(timings, 'reRetrievalMs', () =>
        reRetrieve(
          again.map((i) => chosen[i]!),
          this.ports,
        ),
      );
      again.forEach((i, n) => (chosen[i] = retried[n]!));
      return chosen;
    });
    return out;
  }

  /** What adopts a period's reading in the text: the readings' gate where one is trained, else the certainty gate. */
  private get textGate(): Gate | null {
    return this.ports.readingGate ?? this.ports.gate;
  }

  /** The readings of each plan's period and the page passages read beside them, read and weighed by the certainty gate. */
  private async periodReadings(plans: readonly InstantPlan[], timings: StageTimings): Promise<Attempt[]> {
    if (plans.length === 0) return [];
    const read = await timed(timings, 'retrievalMs', () => readPeriods(plans, this.ports));
    const gated = await this.readAndGate([...read.map(({ readings }) => readings), ...read.map(({ alike }) => alike)], timings);
    return read.map((_, i) => withPagePassages(gated[i]!, gated[read.length + i]!));
  }

  /** Each plan's period read in the text, the readings weighed by their own gate where one is trained, and the answer chosen (chooseReading). */
  private async answerFromText(plans: readonly InstantPlan[], timings: StageTimings): Promise<Attempt[]> {
    const gated = await this.periodReadings(plans, timings);
    const readingGate = this.ports.readingGate;
    return (readingGate ? await timed(timings, 'gateMs', () => gateReadings(gated, readingGate)) : gated).map((attempt) =>
      chooseReading(attempt, readingGate != null),
    );
  }

  /** The readings of every question that asks about a period and the page passages read beside them, with the features the readings' gate learns from. */
  async periodReadingCandidates(requests: readonly AskRequest[], defaultAsOf: Date): Promise<Array<Array<{ candidate: GatedCandidate; features: number[] }>>> {
    const asked = await this.planner.plan(requests, defaultAsOf, 'questions');
    const attempts = await this.periodReadings(
      asked.flatMap((question) => (question.textPlan ? [question.textPlan] : [])),
      emptyTimings(),
    );
    let next = 0;
    return asked.map((question) => {
      if (!question.textPlan) return [];
      const attempt = attempts[next++]!;
      const features = readingFeatures(attempt);
      return attempt.candidates.map((candidate, i) => ({ candidate, features: features[i]! }));
    });
  }

  /** The first round of retrieval for each plan, its candidates (the asked fact among them) read and gated. */
  private async retrieveAndRead(plans: readonly InstantPlan[], timings: StageTimings): Promise<Attempt[]> {
    const attempts = await timed(timings, 'retrievalMs', async () => {
      const rounds = await firstRound(plans, this.ports);
      const linked = await this.planner.linkRetrievedSubjects(rounds.map(({ plan, round }) => ({ plan, hits: round.hits })));
      return linked.map((plan, i) => firstRoundAttempt(plan, rounds[i]!.round, this.ports.factCandidates !== false));
    });
    return this.readAndGate(attempts, timings);
  }

  private async readAndGate(attempts: readonly Attempt[], timings: StageTimings): Promise<Attempt[]> {
    const read = await timed(timings, 'generationMs', () => readCandidates(attempts));
    return timed(timings, 'gateMs', () => gateCandidates(read, this.ports.gate));
  }
}
