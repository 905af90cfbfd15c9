/**
 * Scores candidate answer spans of a passage for a question, in the manner of the SQuAD
 * logistic-regression baseline: features of the span, of its sentence's match with the
 * question and of the words around it, weighed by a model run in the addon's Classifier
 * (trained by `chronoql train-spans` on part of a public QA set).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Classifier, type ClassifierModelJson } from '../native/index.js';
import { modelsDir } from '../paths.js';
import type { QuestionAnalysis } from './question.js';
import { annotate, AnswerType, candidateSpans, type AnnotatedSentence, type Span } from '../text/annotation.js';

const KINDS = [
  ['Name', AnswerType.NAME],
  ['Date', AnswerType.DATE],
  ['Number', AnswerType.NUMBER],
  ['Phrase', AnswerType.THING],
] as const;
const QUESTION_TYPES = Object.values(AnswerType);
/** Parts of speech around and at the edges of a span that say whether it is a whole answer. */
const CONTEXT_POS = ['ADP', 'VERB', 'AUX', 'DET', 'PUNCT', 'NOUN', 'CCONJ', 'PROPN'] as const;
const EDGE_POS = ['NOUN', 'PROPN', 'NUM', 'ADJ'] as const;

export const SPAN_FEATURES = [
  'typeMatch',
  'sentenceCoverage',
  'weightedCoverage',
  'weightedWindow',
  'bigramCoverage',
  'windowCoverage',
  'proximity',
  'leftMatch',
  'rightMatch',
  'inQuestion',
  'length',
  'bestSentence',
  'tail',
  'joined',
  'leftProximity',
  'rightProximity',
  'weightedProximity',
  'verbProximity',
  ...CONTEXT_POS.flatMap((pos) => [`before${pos}`, `after${pos}`]),
  ...EDGE_POS.flatMap((pos) => [`starts${pos}`, `ends${pos}`]),
  // Which kinds of span answer which kinds of question, learned rather than written down.
  ...QUESTION_TYPES.flatMap((type) => KINDS.map(([kind]) => `${type.toLowerCase()}Question${kind}`)),
] as const;
export const SPAN_CLASSES: readonly [string, string] = ['answer', 'other'];

const WINDOW = 10;

export interface SpanCandidate extends Span {
  features: number[];
}

function bigrams(stems: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 1; i < stems.length; i++) out.add(`${stems[i - 1]} ${stems[i]}`);
  return out;
}

/** Every candidate span of `text` with its feature row (in SPAN_FEATURES order). */
export function spanCandidates(question: QuestionAnalysis, text: string): SpanCandidate[] {
  const sentences = annotate(text);
  const questionBigrams = bigrams(question.tokens.filter((t) => /[\p{L}\p{N}]/u.test(t.text)).map((t) => t.stem));
  const coverage = (sentence: AnnotatedSentence): number => {
    if (question.terms.size === 0) return 0;
    const stems = new Set(sentence.tokens.map((t) => t.stem));
    let held = 0;
    for (const term of question.terms) if (stems.has(term)) held++;
    return held / question.terms.size;
  };
  const coverages = sentences.map(coverage);
  // The question's own verbs ("won", "founded") anchor the answer more than its nouns.
  const questionVerbs = new Set(question.tokens.filter((t) => t.pos === 'VERB' && !t.stop).map((t) => t.stem));
  // Rarer words of the passage say more about where the answer is (inverse sentence frequency).
  const frequency = new Map<string, number>();
  for (const sentence of sentences) for (const stem of new Set(sentence.tokens.map((t) => t.stem))) frequency.set(stem, (frequency.get(stem) ?? 0) + 1);
  const weight = (stem: string): number => Math.log(1 + sentences.length / (frequency.get(stem) ?? 0.5));
  let questionWeight = 0;
  for (const term of question.terms) questionWeight += weight(term);
  const weighted = (stems: Iterable<string>): number => {
    if (questionWeight === 0) return 0;
    let sum = 0;
    for (const stem of new Set(stems)) if (question.terms.has(stem)) sum += weight(stem);
    return sum / questionWeight;
  };
  const best = Math.max(0, ...coverages);
  const candidates: SpanCandidate[] = [];
  sentences.forEach((sentence, s) => {
    const { tokens } = sentence;
    const matches = tokens.flatMap((token, i) => (question.terms.has(token.stem) ? [i] : []));
    const sentenceBigrams = bigrams(tokens.filter((t) => /[\p{L}\p{N}]/u.test(t.text)).map((t) => t.stem));
    let sharedBigrams = 0;
    for (const bigram of questionBigrams) if (sentenceBigrams.has(bigram)) sharedBigrams++;
    const bigramCoverage = questionBigrams.size === 0 ? 0 : sharedBigrams / questionBigrams.size;
    const sentenceWeight = weighted(tokens.map((t) => t.stem));
    for (const span of candidateSpans(sentence, s)) {
      const outside = matches.filter((i) => i < span.start || i >= span.end);
      const distance = outside.length === 0 ? Infinity : Math.min(...outside.map((i) => (i < span.start ? span.start - i : i - span.end + 1)));
      const left = outside.filter((i) => i < span.start);
      const right = outside.filter((i) => i >= span.end);
      let weightedProximity = 0;
      for (const i of outside) weightedProximity += weight(tokens[i]!.stem) / (1 + (i < span.start ? span.start - i : i - span.end + 1));
      const verbs = outside.filter((i) => questionVerbs.has(tokens[i]!.stem));
      const verbDistance = verbs.length === 0 ? Infinity : Math.min(...verbs.map((i) => (i < span.start ? span.start - i : i - span.end + 1)));
      const before = tokens[span.start - 1]?.pos;
      const after = tokens[span.end]?.pos;
      const window = new Set(outside.filter((i) => i >= span.start - WINDOW && i < span.end + WINDOW).map((i) => tokens[i]!.stem));
      const spanContent = tokens.slice(span.start, span.end).filter((t) => !t.stop);
      const neighbour = (from: number, step: number): boolean => {
        for (let i = from; i >= 0 && i < tokens.length; i += step) if (/[\p{L}\p{N}]/u.test(tokens[i]!.text)) return question.terms.has(tokens[i]!.stem);
        return false;
      };
      const typeMatch = span.types.has(question.answerType) ? 1 : 0;
      candidates.push({
        ...span,
        features: [
          typeMatch,
          coverages[s]!,
          sentenceWeight,
          weighted(window),
          bigramCoverage,
          question.terms.size === 0 ? 0 : window.size / question.terms.size,
          1 / (1 + distance),
          neighbour(span.start - 1, -1) ? 1 : 0,
          neighbour(span.end, 1) ? 1 : 0,
          spanContent.length === 0 ? 0 : spanContent.filter((t) => question.terms.has(t.stem)).length / spanContent.length,
          (span.end - span.start) / 10,
          coverages[s] === best && best > 0 ? 1 : 0,
          span.form === 'tail' ? 1 : 0,
          span.form === 'joined' ? 1 : 0,
          left.length === 0 ? 0 : 1 / (1 + span.start - Math.max(...left)),
          right.length === 0 ? 0 : 1 / (1 + Math.min(...right) - span.end + 1),
          questionWeight === 0 ? 0 : weightedProximity / questionWeight,
          1 / (1 + verbDistance),
          ...CONTEXT_POS.flatMap((pos) => [before === pos ? 1 : 0, after === pos ? 1 : 0]),
          ...EDGE_POS.flatMap((pos) => [tokens[span.start]!.pos === pos ? 1 : 0, tokens[span.end - 1]!.pos === pos ? 1 : 0]),
          ...QUESTION_TYPES.flatMap((type) => KINDS.map(([, kind]) => (type === question.answerType && span.types.has(kind) ? 1 : 0))),
        ],
      });
    }
  });
  return candidates;
}

export function loadSpanScorerModel(path = join(modelsDir(), 'span-scorer.json')): ClassifierModelJson {
  return JSON.parse(readFileSync(path, 'utf8')) as ClassifierModelJson;
}

/** A span scorer: the probability that each candidate is the answer, from the addon's Classifier. */
export class SpanScorer {
  private constructor(private readonly classifier: Classifier) {}

  static fromModel(model: ClassifierModelJson = loadSpanScorerModel()): SpanScorer {
    const classifier = Classifier.fromJson(model);
    if (classifier.features.join() !== SPAN_FEATURES.join()) throw new RangeError(`span scorer model has features [${classifier.features.join(', ')}], expected [${SPAN_FEATURES.join(', ')}]`);
    return new SpanScorer(classifier);
  }

  /** p(answer) of every candidate of every passage, in one native call. */
  async score(candidates: readonly SpanCandidate[][]): Promise<number[][]> {
    const rows = candidates.flat();
    if (rows.length === 0) return candidates.map(() => []);
    const probabilities = await this.classifier.scoreBatch(rows.map((row) => row.features));
    let r = 0;
    return candidates.map((list) => list.map(() => probabilities[2 * r++]!));
  }
}
