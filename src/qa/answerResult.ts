/**
 * The last stage of `ask`: a request's attempts (one per instant of its time scope) become its
 * answer. Answers of several instants are merged (scopedAnswers.ts); the chosen candidate is
 * adopted only when the gate trusts it and the question names nothing the store has never heard
 * of, and otherwise becomes an abstention with its best guess and why.
 */
import { isAdopted, type Attempt, type GatedCandidate } from './attempts.js';
import type { AskedQuestion } from './planning.js';
import type { Gate } from './ports.js';
import { mergeScopedAnswers } from './scopedAnswers.js';
import { isoDay } from '../domain/time.js';
import { DecisionAction, EvidenceKind, type AnswerResult, type ScopedAnswer, type StageTimings } from './types.js';

/** Why the best guess is not adopted. */
function abstention(chosen: GatedCandidate, gate: Gate | null, strangers: readonly string[]): string {
  if (strangers.length > 0)
    return `not adopted: the store knows nothing about ${strangers.map((name) => `"${name}"`).join(', ')}; "${chosen.answer}" is the best guess`;
  if (gate === null) return 'not adopted: no certainty gate is trained (chronoql train-gate)';
  if (chosen.certainty === null) return 'not adopted: the answer comes from the generator alone, which the gate does not score';
  return `not adopted: p(reliable) ${chosen.certainty.reliable.toFixed(2)} is below ${gate.threshold(chosen.evidence).toFixed(2)}, where answers from ${chosen.evidence.kind === EvidenceKind.FACT ? 'facts' : 'text'} are adopted; "${chosen.answer}" is the best guess`;
}

/**
 * A request's answer: from its period read in the text when the text states a time in it (the
 * text's own dates beat the snapshot clock), else from the snapshot clock's instants, merged.
 */
export function answerOf(asked: AskedQuestion, attempts: readonly Attempt[], fromText: Attempt | null, gate: Gate | null, timings: StageTimings): AnswerResult {
  if (fromText?.chosen) return answerFrom(asked, fromText, [], gate, timings);
  if (attempts.length === 0) {
    const note = fromText
      ? `nothing the store knew as of ${isoDay(asked.asOf)} states a time in ${asked.scope?.text ?? 'the asked period'}`
      : asked.instants.note;
    return nothingToAnswer(asked, note ?? 'nothing to answer from', timings);
  }
  const answers = attempts.map(({ plan, chosen }) => ({
    instant: plan.asOf,
    guess: chosen?.answer || null,
    adopted: isAdopted(gate, chosen),
    certainty: chosen?.certainty ?? null,
    evidence: chosen?.evidence ?? null,
  }));
  const end = asked.scope?.to && asked.scope.to < asked.asOf ? asked.scope.to : asked.asOf;
  const { main, others } = attempts.length > 1 ? mergeScopedAnswers(answers, end, asked.instants.main) : { main: 0, others: [] };
  return answerFrom(asked, attempts[main]!, others, gate, timings);
}

function nothingToAnswer(asked: AskedQuestion, cue: string, timings: StageTimings): AnswerResult {
  return {
    question: asked.question,
    text: null,
    guess: null,
    adopted: false,
    certainty: null,
    decision: { action: DecisionAction.NO_RETRIEVE, timeSensitive: true, cues: [cue], changedSince: [] },
    candidates: [],
    rounds: [],
    asOf: asked.asOf,
    timeScope: asked.scope,
    otherAnswers: [],
    generator: '',
    timings: { ...timings },
  };
}

function answerFrom(asked: AskedQuestion, attempt: Attempt, others: ScopedAnswer[], gate: Gate | null, timings: StageTimings): AnswerResult {
  const { plan, chosen, candidates, rounds } = attempt;
  // An answer about something the store has never heard of is not adopted, however sure the gate is.
  const strangers = plan.unheardOf;
  const adopted = isAdopted(gate, chosen) && strangers.length === 0;
  const rest = candidates.filter((c) => c !== chosen).sort((a, b) => (b.certainty?.reliable ?? 0) - (a.certainty?.reliable ?? 0));
  const guess = chosen?.answer || null;
  const stated = chosen?.evidence.statedTime ? [`the text states "${chosen.evidence.statedTime.text}" in ${chosen.evidence.articleId}`] : [];
  const cues = [...(adopted || guess === null ? [] : [abstention(chosen!, gate, strangers)]), ...plan.decision.cues, ...stated];
  return {
    question: asked.question,
    text: adopted ? guess : null,
    guess,
    adopted,
    certainty: chosen?.certainty ?? null,
    decision: { ...plan.decision, cues },
    candidates: (chosen ? [chosen, ...rest] : rest).map(({ features: _features, readerScore: _score, ...candidate }) => candidate),
    rounds: [...rounds],
    asOf: asked.asOf,
    timeScope: asked.scope,
    otherAnswers: others,
    generator: plan.generator.name,
    timings: { ...timings },
  };
}
