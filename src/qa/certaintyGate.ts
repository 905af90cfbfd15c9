/**
 * RiLM's certainty gate (GrowOVER): for each (question, document, candidate answer) a
 * classifier run by the addon predicts reliable / misleading / uncertain. The best document
 * D* is the one with the highest p(reliable); its answer is adopted when "reliable" is the
 * predicted class. ARR's ω = λ·p(reliable | D*), with λ stored beside the weights.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { f1Score } from '../bench/answerMetrics.js';
import { normalizeAnswer } from '../text/normalize.js';
import type { ChangeProfile } from '../graph/answeringRepository.js';
import type { FactRecord } from '../graph/model.js';
import { Classifier, type ClassifierModelJson } from '../native/index.js';
import { modelsDir } from '../paths.js';
import { termCoverage } from '../text/language.js';
import type { QuestionAnalysis } from './question.js';
import { annotate, candidateSpans } from '../text/annotation.js';
import { EvidenceKind, type Certainty, type Evidence } from './types.js';

export const GATE_FEATURES = [
  'denseScore',
  'lexicalScore',
  'fusedScore',
  'reciprocalRank',
  'inDocument',
  'typeMatch',
  'termCoverage',
  'factAgreement',
  'isFact',
  'ageYears',
  'volatility',
  'timeSensitive',
  'generatorConfidence',
] as const;
export const GATE_CLASSES = ['reliable', 'misleading', 'uncertain'] as const;
export type GateClass = (typeof GATE_CLASSES)[number];

/** GrowOVER's λ for a sentence-embedding retriever; `train-gate` picks its own on held-out items. */
export const DEFAULT_LAMBDA = 2.0;

export interface GateModelFile {
  classifier: ClassifierModelJson;
  lambda: number;
  /** How the model was made, for the record (command, items, held-out scores). */
  provenance?: Record<string, unknown>;
}

export const DEFAULT_GATE_PATH = (): string => join(modelsDir(), 'certainty-gate.json');

/** What the features of one candidate are computed from. */
export interface GateContext {
  question: QuestionAnalysis;
  evidence: Evidence;
  answer: string;
  generatorConfidence: number;
  /** The fact the question asks for, as valid at asOf (null when none matched). */
  currentFact: FactRecord | null;
  profile: ChangeProfile | undefined;
  asOf: Date;
  timeSensitive: boolean;
  /** The best lexical score of the round, to put BM25 scores on a 0–1 scale. */
  maxLexicalScore: number;
}

const YEAR_MS = 365 * 86_400_000;

/** The sentence of a passage that holds the answer, or the whole text when none does. */
function answerSentence(text: string, answer: string): string {
  const wanted = normalizeAnswer(answer);
  return annotate(text).find((sentence) => wanted !== '' && normalizeAnswer(sentence.text).includes(wanted))?.text ?? text;
}

export function gateFeatures(context: GateContext): number[] {
  const { evidence, answer, question, currentFact } = context;
  const isFact = evidence.kind === EvidenceKind.FACT;
  const normalized = normalizeAnswer(answer);
  const inDocument = normalized !== '' && (isFact || normalizeAnswer(evidence.text).includes(normalized));
  const answerSpans = normalized === '' ? [] : annotate(answer).flatMap((sentence, s) => candidateSpans(sentence, s));
  return [
    evidence.denseScore ?? 0,
    context.maxLexicalScore > 0 && evidence.lexicalScore !== null ? evidence.lexicalScore / context.maxLexicalScore : 0,
    evidence.fusedScore ?? 0,
    evidence.rank === null ? 0 : 1 / evidence.rank,
    inDocument ? 1 : 0,
    answerSpans.some((span) => span.types.has(question.answerType)) ? 1 : 0,
    isFact ? 1 : termCoverage(question.terms, answerSentence(evidence.text, answer)),
    // From -1 (disagrees) to 1 (the same value): a part of the value ("Klopp") agrees only partly.
    currentFact === null || normalized === '' ? 0 : 2 * f1Score(answer, [currentFact.value]) - 1,
    isFact ? 1 : 0,
    Math.max(0, (context.asOf.getTime() - evidence.validFrom.getTime()) / YEAR_MS),
    Math.log1p(context.profile?.recentRevisions ?? 0),
    context.timeSensitive ? 1 : 0,
    context.generatorConfidence,
  ];
}

export class CertaintyGate {
  private constructor(
    private readonly classifier: Classifier,
    readonly lambda: number,
  ) {}

  static fromModel(model: GateModelFile): CertaintyGate {
    const classifier = Classifier.fromJson(model.classifier);
    if (classifier.features.join() !== GATE_FEATURES.join() || classifier.classes.join() !== GATE_CLASSES.join()) {
      throw new RangeError(`certainty gate model must have features [${GATE_FEATURES.join(', ')}] and classes [${GATE_CLASSES.join(', ')}]`);
    }
    if (!(model.lambda >= 0)) throw new RangeError(`certainty gate model: lambda must be ≥ 0, got ${model.lambda}`);
    return new CertaintyGate(classifier, model.lambda);
  }

  static load(path = DEFAULT_GATE_PATH()): CertaintyGate {
    return CertaintyGate.fromModel(JSON.parse(readFileSync(path, 'utf8')) as GateModelFile);
  }

  /** Class probabilities of many candidates in one native call. */
  async score(rows: readonly number[][]): Promise<Certainty[]> {
    if (rows.length === 0) return [];
    const p = await this.classifier.scoreBatch(rows);
    return rows.map((_, r) => ({ reliable: p[3 * r]!, misleading: p[3 * r + 1]!, uncertain: p[3 * r + 2]! }));
  }
}

/** The class a certainty predicts. */
export function predictedClass(certainty: Certainty): GateClass {
  if (certainty.reliable >= certainty.misleading && certainty.reliable >= certainty.uncertain) return 'reliable';
  return certainty.misleading >= certainty.uncertain ? 'misleading' : 'uncertain';
}
