/**
 * RiLM's certainty gate (GrowOVER): for each (question, document, candidate answer) a
 * classifier run by the addon predicts reliable / misleading / uncertain. The best document
 * D* is the one with the highest p(reliable). p(reliable) is calibrated on real questions (the
 * share of answers with p ≈ 0.8 that are right is about 0.8), and an answer is adopted only when
 * p(reliable) reaches the model's `adoptAt` for its kind (a fact, or a span of text), each chosen
 * so that at least 96 % of the adopted answers of that kind were right on the tuning data. ARR's ω = λ·p(reliable | D*), with λ stored beside the weights.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChangeProfile } from '../graph/answeringRepository.js';
import { Classifier, type ClassifierModelJson } from '../native/index.js';
import { modelsDir } from '../platform/paths.js';
import { annotate, candidateSpans } from '../text/annotation.js';
import { termCoverage } from '../text/language.js';
import { normalizeAnswer } from '../text/normalize.js';
import { f1Score } from './answerMetrics.js';
import type { FactMatch } from './factLinker.js';
import type { QuestionAnalysis } from './question.js';
import { attributeNames } from './roleAcronyms.js';
import { EvidenceKind, type Certainty, type Evidence } from './types.js';

export const GATE_FEATURES = [
  'isFact',
  'factSimilarity',
  'factMargin',
  'factWordOverlap',
  'subjectCoverage',
  'generatorConfidence',
  'readerScore',
  'readerLead',
  'agreement',
  'factAgreement',
  'formerValue',
  'denseScore',
  'lexicalScore',
  'fusedScore',
  'reciprocalRank',
  'typeMatch',
  'sentenceCoverage',
  'namesNearAnswer',
  'namesInTitle',
  'ageYears',
  'volatility',
  'timeSensitive',
  'answerWords',
] as const;
export const GATE_CLASSES = ['reliable', 'misleading', 'uncertain'] as const;
export type GateClass = (typeof GATE_CLASSES)[number];

/** GrowOVER's λ for a sentence-embedding retriever; `train-gate` picks its own on held-out items. */
export const DEFAULT_LAMBDA = 2.0;

export interface GateModelFile {
  classifier: ClassifierModelJson;
  lambda: number;
  /** The calibrated p(reliable) from which an answer is adopted: a fact's, and a span of text's. */
  adoptAt: AdoptionThresholds;
  /** How the model was made, for the record (command, items, held-out scores). */
  provenance?: Record<string, unknown>;
}

export interface AdoptionThresholds {
  fact: number;
  text: number;
}

export const DEFAULT_GATE_PATH = (): string => join(modelsDir(), 'certainty-gate.json');

/** What the features of one candidate are computed from. */
export interface GateContext {
  question: QuestionAnalysis;
  /** The question's proper names, lower case ("nvidia"). */
  names: readonly string[];
  evidence: Evidence;
  answer: string;
  generatorConfidence: number;
  /** The reader's unnormalised span score (null for facts and other generators). */
  readerScore: number | null;
  /** The best reader score among the question's other documents. */
  otherReaderScore: number | null;
  /** The answers of the question's other candidates. */
  otherAnswers: readonly string[];
  /** The fact the question asks for, as valid at the asked time, and how well it matched. */
  factMatch: FactMatch | null;
  /** Values the matched attribute had before (outdated versions). */
  formerValues: readonly string[];
  /** How fully the question names the document's article (0 when it does not). */
  subjectCoverage: number;
  /** The question's words that name the document's article, lower case ("fed" for Federal Reserve; none when it names another). */
  subjectWords: readonly string[];
  profile: ChangeProfile | undefined;
  asOf: Date;
  timeSensitive: boolean;
  /** The best lexical score of the round, to put BM25 scores on a 0–1 scale. */
  maxLexicalScore: number;
}

const YEAR_MS = 365 * 86_400_000;
const clip = (value: number, bound: number): number => Math.max(-bound, Math.min(bound, value));

/** The sentence of a passage that holds the answer, with its neighbours, or the whole text when none does. */
function answerContext(text: string, answer: string): { sentence: string; window: string } {
  const wanted = normalizeAnswer(answer);
  const sentences = annotate(text);
  const at = wanted === '' ? -1 : sentences.findIndex((sentence) => normalizeAnswer(sentence.text).includes(wanted));
  if (at < 0) return { sentence: text, window: text };
  return {
    sentence: sentences[at]!.text,
    window: sentences
      .slice(Math.max(0, at - 1), at + 2)
      .map((s) => s.text)
      .join(' '),
  };
}

/** The share of the question's names found in `text`, counting those `known` accepts though the text writes them otherwise. */
function namesIn(names: readonly string[], text: string, known: (name: string) => boolean = () => false): number {
  if (names.length === 0) return 1;
  const words = new Set(normalizeAnswer(text).split(' '));
  return names.filter((name) => known(name) || name.split(' ').every((word) => words.has(word))).length / names.length;
}

export function gateFeatures(context: GateContext): number[] {
  const { evidence, answer, question, factMatch } = context;
  const isFact = evidence.kind === EvidenceKind.FACT;
  const ownFact = isFact && factMatch !== null && factMatch.fact.id === evidence.id;
  const normalized = normalizeAnswer(answer);
  const answerSpans = normalized === '' ? [] : annotate(answer).flatMap((sentence, s) => candidateSpans(sentence, s));
  const others = context.otherAnswers.filter((other) => normalizeAnswer(other) !== '');
  const agrees = (a: string, b: readonly string[]): boolean => normalized !== '' && f1Score(a, b) >= 0.5;
  const currentValue = factMatch?.fact.value ?? null;
  const { sentence, window } = isFact ? { sentence: evidence.text, window: evidence.text } : answerContext(evidence.text, answer);
  // A fact states its article, which the question may name by another form ("the Fed", "the UK"),
  // and its attribute, which a name may give as initials ("VP"). Not extended to passages: on held-out
  // SQuAD, "EU" naming European Union law's articles adopted two more wrong answers and one right fewer.
  const attributeForms = ownFact ? attributeNames(factMatch.fact.attribute) : [];
  const namesFact = (name: string): boolean =>
    isFact && (name.split(' ').every((word) => context.subjectWords.includes(word)) || attributeForms.includes(name));
  return [
    isFact ? 1 : 0,
    ownFact ? factMatch.similarity : 0,
    ownFact ? Math.min(factMatch.margin, 0.2) : 0,
    ownFact ? factMatch.wordOverlap : 0,
    context.subjectCoverage,
    context.generatorConfidence,
    context.readerScore === null ? 0 : clip(context.readerScore, 50),
    context.readerScore === null || context.otherReaderScore === null ? 0 : clip(context.readerScore - context.otherReaderScore, 20),
    others.length === 0 ? 0 : others.filter((other) => agrees(answer, [other])).length / others.length,
    // From -1 (disagrees) to 1 (the same value): a part of the value ("Klopp") agrees only partly.
    currentValue === null || normalized === '' ? 0 : 2 * f1Score(answer, [currentValue]) - 1,
    agrees(answer, context.formerValues) && !(currentValue !== null && agrees(answer, [currentValue])) ? 1 : 0,
    evidence.denseScore ?? 0,
    context.maxLexicalScore > 0 && evidence.lexicalScore !== null ? evidence.lexicalScore / context.maxLexicalScore : 0,
    evidence.fusedScore ?? 0,
    evidence.rank === null ? 0 : 1 / evidence.rank,
    answerSpans.some((span) => span.types.has(question.answerType)) ? 1 : 0,
    isFact ? 1 : termCoverage(question.terms, sentence),
    namesIn(context.names, window, namesFact),
    namesIn(context.names, evidence.articleId, namesFact),
    Math.max(0, (context.asOf.getTime() - evidence.validFrom.getTime()) / YEAR_MS),
    Math.log1p(context.profile?.recentRevisions ?? 0),
    context.timeSensitive ? 1 : 0,
    Math.min(normalized.split(' ').filter(Boolean).length, 20) / 10,
  ];
}

export class CertaintyGate {
  private constructor(
    private readonly classifier: Classifier,
    readonly lambda: number,
    readonly adoptAt: AdoptionThresholds,
  ) {}

  /** A gate over `features` (the certainty gate's, or another gate's such as the period readings'), trained by `trainedBy`. */
  static fromModel(model: GateModelFile, features: readonly string[] = GATE_FEATURES, trainedBy = 'chronoql train-gate'): CertaintyGate {
    const classifier = Classifier.fromJson(model.classifier);
    if (classifier.features.join() !== features.join() || classifier.classes.join() !== GATE_CLASSES.join()) {
      throw new RangeError(
        `certainty gate model must have features [${features.join(', ')}] and classes [${GATE_CLASSES.join(', ')}]: retrain it with \`${trainedBy}\``,
      );
    }
    if (!(model.lambda >= 0)) throw new RangeError(`certainty gate model: lambda must be ≥ 0, got ${model.lambda}`);
    for (const kind of ['fact', 'text'] as const) {
      const threshold = model.adoptAt?.[kind];
      if (!(typeof threshold === 'number' && threshold > 0 && threshold <= 1))
        throw new RangeError(`certainty gate model: adoptAt.${kind} must be in (0, 1], got ${threshold}`);
    }
    return new CertaintyGate(classifier, model.lambda, model.adoptAt);
  }

  static load(path = DEFAULT_GATE_PATH(), features: readonly string[] = GATE_FEATURES, trainedBy?: string): CertaintyGate {
    return CertaintyGate.fromModel(JSON.parse(readFileSync(path, 'utf8')) as GateModelFile, features, trainedBy);
  }

  /** Class probabilities of many candidates in one native call. */
  async score(rows: readonly number[][]): Promise<Certainty[]> {
    if (rows.length === 0) return [];
    const p = await this.classifier.scoreBatch(rows);
    return rows.map((_, r) => ({ reliable: p[3 * r]!, misleading: p[3 * r + 1]!, uncertain: p[3 * r + 2]! }));
  }

  /** The p(reliable) from which an answer drawn from this evidence is adopted. */
  threshold(evidence: Evidence): number {
    return evidence.kind === EvidenceKind.FACT ? this.adoptAt.fact : this.adoptAt.text;
  }

  /** Whether an answer drawn from this evidence with this certainty is adopted. */
  adopts(evidence: Evidence, certainty: Certainty | null): boolean {
    return certainty !== null && certainty.reliable >= this.threshold(evidence);
  }
}
