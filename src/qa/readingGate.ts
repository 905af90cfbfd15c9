/**
 * The gate of a period's readings in the text (event time). The certainty gate learned from
 * retrieved passages, with their search scores; a reading is the part of a page's sentence that a
 * time fitting the period governs, found by its time, not by a search, and that gate gives nearly
 * all of them p(reliable) ≈ 0. This gate weighs what a reading has instead: how well its stated
 * time fits the period and how far it beats the best reading with another answer, beside what the
 * reader and the certainty gate say of it. `chronoql train-reading-gate` fits it on TimeQA's tune
 * half; without its model, readings are weighed by the certainty gate alone.
 */
import { join } from 'node:path';
import { modelsDir } from '../platform/paths.js';
import { contentTerms } from '../text/language.js';
import { normalizeAnswer } from '../text/normalize.js';
import { scoredBy, type Attempt, type GatedCandidate } from './attempts.js';
import { GATE_FEATURES } from './certaintyGate.js';
import { readingFit } from './periodReading.js';
import type { Gate } from './ports.js';

export const READING_GATE_FEATURES = [
  'fit',
  'fitLead',
  'textReliable',
  'readerScore',
  'readerLead',
  'typeMatch',
  'sentenceCoverage',
  'agreement',
  'subjectCoverage',
  'answerWords',
  'answerInQuestion',
] as const;

/** The certainty gate's features a reading's gate takes over as they are. */
const TAKEN_OVER = ['readerScore', 'readerLead', 'typeMatch', 'sentenceCoverage', 'agreement', 'subjectCoverage', 'answerWords'] as const;
const TAKEN_AT = TAKEN_OVER.map((name) => GATE_FEATURES.indexOf(name));

export const DEFAULT_READING_GATE_PATH = (): string => join(modelsDir(), 'reading-gate.json');

/** Each candidate's features for the readings' gate, in order; its certainty gate features must be computed. */
export function readingFeatures(attempt: Attempt): number[][] {
  const asked = contentTerms(attempt.plan.query);
  const fits = attempt.candidates.map((candidate) => readingFit(attempt.plan, candidate));
  const answers = attempt.candidates.map((candidate) => normalizeAnswer(candidate.answer));
  return attempt.candidates.map((candidate: GatedCandidate, i) => {
    const rivals = fits.filter((_, j) => answers[j] !== '' && answers[j] !== answers[i]);
    const terms = [...contentTerms(candidate.answer)];
    const [readerScore, readerLead, typeMatch, sentenceCoverage, agreement, subjectCoverage, answerWords] = TAKEN_AT.map((at) => candidate.features[at] ?? 0);
    return [
      fits[i]!,
      fits[i]! - Math.max(0, ...rivals),
      candidate.certainty?.reliable ?? 0,
      readerScore!,
      readerLead!,
      typeMatch!,
      sentenceCoverage!,
      agreement!,
      subjectCoverage!,
      answerWords!,
      // An answer made of the question's own words ("Gary Mills" for "whom did Gary Mills coach") is no answer.
      terms.length === 0 ? 0 : terms.filter((term) => asked.has(term)).length / terms.length,
    ];
  });
}

/** The readings of each attempt weighed by the readings' gate: their certainty becomes its. */
export function gateReadings(attempts: readonly Attempt[], gate: Gate): Promise<Attempt[]> {
  return scoredBy(gate, attempts, readingFeatures);
}
