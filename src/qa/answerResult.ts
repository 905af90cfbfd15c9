/**
 * The last stage of `ask`: a request's attempts (one per instant of its time scope) become its
 * answer. Answers of several instants are merged (scopedAnswers.ts); the chosen candidate is
 * adopted only when the gate trusts it and the question names nothing the store has never heard
 * of, and otherwise becomes an abstention with its best guess and why.
 */
import { isAdopted, isDescribed, type Attempt, type GatedCandidate } from './attempts.js';
import { linkedOwnerObjection, ownerObjection } from './unlinkedOwners.js';
import { isReading } from './evidence.js';
import type { AskedQuestion } from './planning.js';
import type { PlanAnchor } from './textAnchors.js';
import type { Gate } from './ports.js';
import { mergeScopedAnswers } from './scopedAnswers.js';
import { DAY } from './textTime.js';
import { quizObjection } from './quizEvidence.js';
import { TimeScopeKind } from './timeScope.js';
import { typeMisfit } from './typeMisfit.js';
import { isoDay } from '../domain/time.js';
import { contentTerms } from '../text/language.js';
import { normalizeAnswer } from '../text/normalize.js';
import { DecisionAction, EvidenceKind, type AnswerResult, type ScopedAnswer, type StageTimings } from './types.js';

/** Why the best guess is not adopted. */
function abstention(
  chosen: GatedCandidate,
  gate: Gate | null,
  refusals: { strangers: readonly string[]; unsaid: readonly string[]; objection: string | null },
): string {
  const { strangers, unsaid, objection } = refusals;
  if (strangers.length > 0)
    return `not adopted: the store knows nothing about ${strangers.map((name) => `"${name}"`).join(', ')}; "${chosen.answer}" is the best guess`;
  if (unsaid.length > 0)
    return `not adopted: the words read ("${chosen.evidence.text}") do not say "${unsaid.join(' ')}"; "${chosen.answer}" is the best guess`;
  if (objection !== null) return `not adopted: ${objection}; "${chosen.answer}" is the best guess`;
  if (gate === null) return 'not adopted: no certainty gate is trained (chronoql train-gate)';
  if (chosen.certainty === null) return 'not adopted: the answer comes from the generator alone, which the gate does not score';
  return `not adopted: p(reliable) ${chosen.certainty.reliable.toFixed(2)} is below ${gate.threshold(chosen.evidence).toFixed(2)}, where answers from ${chosen.evidence.kind === EvidenceKind.FACT ? 'facts' : 'text'} are adopted; "${chosen.answer}" is the best guess`;
}

/**
 * Why the answer, the asked fact's current value, may not answer a question that names a past
 * year as an event: the fact had another value then ("Who won the 2023 final?" is not answered by
 * the 2024 champion). Null when it may.
 */
function changedSinceNamedYear(plan: Attempt['plan'], answer: string): string | null {
  const then = plan.namedYearValue;
  const fact = plan.factMatch?.fact;
  if (!then || !fact || normalizeAnswer(answer) !== normalizeAnswer(fact.value)) return null;
  return `the question names ${then.year}, and "${fact.attribute}" of ${fact.subject} has changed since (at the end of ${then.year}: "${then.value}")`;
}

/**
 * Whether a reading of the text speaks of the fact the question asks for: when the clock found
 * that fact ("Manager" of Manchester United), the words read must name its attribute, each of its
 * words, or a page's other news of the period would answer: "Omar Berrada became chief executive
 * in July 2024" for the manager, "President of the National Assembly" for the Senate's.
 */
function namesAskedAttribute(said: ReadonlySet<string>, attempts: readonly Attempt[]): boolean {
  const attribute = attempts.find((attempt) => attempt.plan.factMatch)?.plan.factMatch?.fact.attribute;
  if (!attribute) return true;
  return [...contentTerms(attribute)].every((term) => said.has(term));
}

/**
 * The words of what the question asks of its subject ("prime minister" of France), when the words
 * read (`said`, their content terms) say none of them: "Emmanuel Macron has been President of
 * France since 2017" fits 2019, but does not say who was prime minister then. Empty when they say
 * one, or the question asks nothing beyond naming its subject.
 */
function unsaidWords(plan: Attempt['plan'], said: ReadonlySet<string>): string[] {
  const naming = contentTerms(plan.subjects.flatMap((subject) => subject.words).join(' '));
  // A possessive's "s" ("Cambodia's") is no word of its own.
  const asked = plan.query
    .replace(/['’]s\b/gu, '')
    .split(/[^\p{L}\p{N}]+/u)
    .map((word) => ({ word, terms: [...contentTerms(word)].filter((term) => !naming.has(term) && !/^\d+$/.test(term)) }))
    .filter(({ terms }) => terms.length > 0);
  return asked.some(({ terms }) => terms.some((term) => said.has(term))) ? [] : asked.map(({ word }) => word);
}

/**
 * Whether the period's reading in the text answers instead of the snapshot clock's answer. The
 * clock answers from the version a snapshot said; the text overrules it where the clock has no
 * answer, where the question asks for the value beside a named one and the clock's answer is
 * neither a fact (whose history would name it) nor adopted, or for the first or last value and the
 * clock's answer is no fact, where the gate trusts the reading and not the clock's answer, or where the reading, in
 * the page of the clock's own evidence, states a time that starts after the snapshot that said
 * the clock's answer: "Barnier has been prime minister since 5 September 2024" is news the
 * 2024-07-01 snapshot's "Attal" predates, while "ten Hag has been manager since 2022" is not.
 */
function textOverrulesClock(
  reading: GatedCandidate,
  clock: GatedCandidate | null,
  gates: { clock: Gate | null; text: Gate | null },
  relation: { anchor: PlanAnchor | null; ordinal: 'first' | 'last' | null },
): boolean {
  if (!clock?.answer) return true;
  // A passage read beside the readings states no time in the period: it answers only where the clock does not.
  if (!isReading(reading.evidence)) return false;
  if (normalizeAnswer(reading.answer) === normalizeAnswer(clock.answer)) return false;
  // The value beside a named one: the fact's history gives it where a version names that value, and an
  // answer the gate adopts stands; else the text does. The first or last value: a fact gives it (planning
  // keeps only a fact of the first of its kind for "the first"); else the text does.
  if (relation.anchor && relation.anchor.side !== 'during') return clock.evidence.kind !== EvidenceKind.FACT && !isAdopted(gates.clock, clock);
  if (relation.ordinal) return clock.evidence.kind !== EvidenceKind.FACT;
  if (isAdopted(gates.text, reading) && !isAdopted(gates.clock, clock)) return true;
  const statedFrom = reading.evidence.statedTime?.from;
  return reading.evidence.articleId === clock.evidence.articleId && statedFrom != null && statedFrom > clock.evidence.validFrom;
}

/**
 * A request's answer: from its period read in the text when the text states a time in it and
 * overrules the snapshot clock (textOverrulesClock), else from the clock's instants, merged.
 */
export function answerOf(
  asked: AskedQuestion,
  attempts: readonly Attempt[],
  fromText: Attempt | null,
  gates: { clock: Gate | null; text: Gate | null },
  timings: StageTimings,
): AnswerResult {
  const gate = gates.clock;
  const byClock = attempts.length > 0 ? mergedByClock(asked, attempts, gate) : null;
  const read = fromText?.chosen ? contentTerms(fromText.chosen.evidence.text) : null;
  const clockChosen = byClock ? attempts[byClock.mainAttempt]!.chosen : null;
  if (fromText?.chosen && read && namesAskedAttribute(read, attempts) && textOverrulesClock(fromText.chosen, clockChosen, gates, fromText.plan)) {
    // The clock's other answers of the period stay beside the text's: what the snapshots said then.
    const answer = normalizeAnswer(fromText.chosen.answer);
    const others = (byClock?.all ?? []).filter((clock) => normalizeAnswer(clock.text) !== answer);
    // A passage read beside the readings states no time in the period: its answer is a guess, never adopted.
    const undated = isReading(fromText.chosen.evidence) ? null : 'no time the words read state fits the asked period';
    return answerFrom(asked, fromText, others, gates.text, timings, unsaidWords(fromText.plan, read), [], undated);
  }
  if (byClock === null) {
    const note = fromText
      ? `nothing the store knew as of ${isoDay(asked.asOf)} states a time in the asked period${asked.scope ? ` ("${asked.scope.text}")` : ''}`
      : asked.instants.note;
    return nothingToAnswer(asked, note ?? 'nothing to answer from', timings);
  }
  const overruled = fromText?.chosen?.evidence.statedTime
    ? [
        `the text states "${fromText.chosen.evidence.statedTime.text}" in ${fromText.chosen.evidence.articleId} ("${fromText.chosen.answer}"), which does not overrule the snapshot clock`,
      ]
    : [];
  // "after X" or "before X" where neither the asked fact's history nor the text dates X: what the clock read is no answer to it.
  const neighbour = attempts[0]!.plan.question.neighbour;
  const undated =
    neighbour && !fromText?.plan.anchor && clockChosen?.evidence.kind !== EvidenceKind.FACT
      ? `neither the history of the asked fact nor the text the store knew as of ${isoDay(asked.asOf)} dates "${neighbour.name}"`
      : null;
  return answerFrom(
    asked,
    attempts[byClock.mainAttempt]!,
    byClock.others,
    gate,
    timings,
    [],
    overruled,
    undated ?? undatedNewsObjection(asked, clockChosen, fromText),
  );
}

/** The longest period a question asks news of: a week ("this week", "last week"); the shortest is a day. */
const NEWS_PERIOD_MS = 7 * DAY;

/**
 * Why the clock's answer from text does not answer a question about a day or a week: no text the
 * store knew states a time in it, so the passage read tells of another time ("Eight candidates took
 * part in the first debate, on 23 August" for this week's debate). The snapshot clock holds a
 * passage as long as no snapshot replaces it, which says nothing of when its news happened. A fact
 * is a state, and answers any day it held; a question about an instant ("as of October 2023")
 * asks what held then, which a passage valid then says. Null where the clock's answer may stand.
 */
function undatedNewsObjection(asked: AskedQuestion, clock: GatedCandidate | null, fromText: Attempt | null): string | null {
  const { scope } = asked;
  if (scope?.kind !== TimeScopeKind.DURING || !scope.from || !scope.to) return null;
  const length = scope.to.getTime() - scope.from.getTime();
  if (length < DAY || length > NEWS_PERIOD_MS) return null;
  if (!clock?.answer || clock.evidence.kind === EvidenceKind.FACT || !fromText) return null;
  if (fromText.candidates.some((candidate) => isReading(candidate.evidence))) return null;
  return `no text the store knew as of ${isoDay(asked.asOf)} states a time in "${scope.text}", so the words read tell of another time`;
}

/** The snapshot clock's answer of a request: its instants' answers merged, the main one and the others with when they held. */
function mergedByClock(
  asked: AskedQuestion,
  attempts: readonly Attempt[],
  gate: Gate | null,
): { mainAttempt: number; others: ScopedAnswer[]; all: ScopedAnswer[] } {
  if (attempts.length === 1) return { mainAttempt: 0, others: [], all: [] };
  const answers = attempts.map(({ plan, chosen }) => ({
    instant: plan.asOf,
    guess: chosen?.answer || null,
    adopted: isAdopted(gate, chosen),
    certainty: chosen?.certainty ?? null,
    evidence: chosen?.evidence ?? null,
  }));
  const end = asked.scope?.to && asked.scope.to < asked.asOf ? asked.scope.to : asked.asOf;
  const { main, others, all } = mergeScopedAnswers(answers, end, asked.instants.main);
  return { mainAttempt: main, others, all };
}

/** The answer when nothing was asked or found: no guess, and the cue says why. */
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

function answerFrom(
  asked: AskedQuestion,
  attempt: Attempt,
  others: ScopedAnswer[],
  gate: Gate | null,
  timings: StageTimings,
  unsaid: readonly string[] = [],
  notes: readonly string[] = [],
  refusal: string | null = null,
): AnswerResult {
  const { plan, chosen, candidates, rounds } = attempt;
  // An answer about something the store has never heard of, read in words that do not say what is
  // asked, of another type than asked, a quiz's options, the current value for a past year asked about, or beside a
  // value nothing dates, is not adopted, however sure the gate is.
  const strangers = plan.unheardOf;
  const objection = chosen?.answer
    ? (refusal ??
      typeMisfit(plan.question.answerType, chosen.answer, chosen.evidence.text) ??
      quizObjection(plan.question.text, chosen.answer, chosen.evidence.text) ??
      changedSinceNamedYear(plan, chosen.answer) ??
      ownerObjection(plan.unlinkedOwners, chosen.answer, chosen.evidence.text) ??
      linkedOwnerObjection(plan.question.text, plan.subjects, chosen.evidence) ??
      (plan.described && isDescribed(chosen.answer, plan.described.value)
        ? `the question names "${plan.described.value}" by one of its facts, and asks something else of it`
        : null))
    : null;
  const adopted = isAdopted(gate, chosen) && strangers.length === 0 && unsaid.length === 0 && objection === null;
  const rest = candidates.filter((c) => c !== chosen).sort((a, b) => (b.certainty?.reliable ?? 0) - (a.certainty?.reliable ?? 0));
  const guess = chosen?.answer || null;
  const stated = chosen?.evidence.statedTime ? [`the text states "${chosen.evidence.statedTime.text}" in ${chosen.evidence.articleId}`] : [];
  const cues = [
    ...(adopted || guess === null ? [] : [abstention(chosen!, gate, { strangers, unsaid, objection })]),
    ...plan.decision.cues,
    ...stated,
    ...notes,
  ];
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
