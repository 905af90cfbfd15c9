/**
 * The extractive reader: a small trained head (models/reader.onnx) over the contextual word
 * states of a pretrained encoder. It aligns each passage word with the question's words
 * (attention over their states), adds the word features, reads the passage with a BiLSTM and
 * scores every word as the start and the end of the answer against the question's summary.
 * The answer is the best span of at most MAX_SPAN_WORDS words inside one sentence. Run by
 * onnxruntime; trained by `chronoql train-reader` (models/README.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { ensurePretrainedModel } from '../../embedding/pretrained.js';
import type { PretrainedModelName } from '../../embedding/types.js';
import { admitAll, type Admission } from '../../platform/fairShares.js';
import { nameRuns, spanText, type Token } from '../../text/annotation.js';
import type { QuestionAnalysis } from '../question.js';
import { openWordEncoder, type WordEncoder, type WordStates } from './wordEncoder.js';
import { QUESTION_FEATURES, questionFeatures, readerPassage, WORD_FEATURES, wordFeatures, type ReaderPassage } from './wordFeatures.js';

/** The encoder whose word states the reader is trained on. */
export const READER_ENCODER: PretrainedModelName = 'e5-small-v2';
/** A passage is read up to this many words (a stored passage has at most 1,500 characters). */
export const MAX_PASSAGE_WORDS = 800;
/** Longer answers are not extracted (GrowOVER's answers are at most 10 tokens; SQuAD's rarely over 15 words). */
export const MAX_SPAN_WORDS = 15;
/** Passages per run of the head: similar lengths together, so little of a run is padding. */
const HEAD_BATCH = 32;

/** What models/reader.json records beside the ONNX head: the encoder it reads and the features it expects. */
export interface ReaderModelInfo {
  encoder: PretrainedModelName;
  /** The encoder's inner tensor whose word states the head reads (its own top layers go on from there); the last layer's when absent. */
  wordLayer?: string;
  wordFeatures: string[];
  questionFeatures: string[];
  provenance?: Record<string, unknown>;
}

export interface ReadSpan {
  text: string;
  /** p(start) · p(end) within the passage. */
  probability: number;
  /** The start and end scores before normalisation: comparable across passages. */
  score: number;
  sentence: number;
  start: number;
  end: number;
}

export interface ReaderCost {
  encoderPasses: number;
  headRuns: number;
}

export const READER_MODEL_PATH = (modelsDir: string): string => join(modelsDir, 'reader.onnx');

export class SpanReader {
  private headRuns = 0;

  private constructor(
    private readonly encoder: WordEncoder,
    private readonly head: ort.InferenceSession,
    private readonly close_: () => Promise<void>,
    private readonly admit: Admission,
  ) {}

  /**
   * Loads the head from `modelsDir` and its encoder (fetched into `encoderDir` on first use).
   * Every encoder pass and head run is a unit of CPU work given to `admit`.
   */
  static async open(options: {
    modelsDir: string;
    encoderDir: string;
    cacheBytes: number;
    threads?: number;
    log?: (message: string) => void;
    admit?: Admission;
  }): Promise<SpanReader> {
    const info = JSON.parse(readFileSync(join(options.modelsDir, 'reader.json'), 'utf8')) as ReaderModelInfo;
    if (info.wordFeatures.join() !== WORD_FEATURES.join() || info.questionFeatures.join() !== QUESTION_FEATURES.join()) {
      throw new RangeError('models/reader.json was trained on other features than this code computes: retrain it with `chronoql train-reader`');
    }
    const headPath = READER_MODEL_PATH(options.modelsDir);
    if (!existsSync(headPath)) throw new RangeError(`the reader model ${headPath} is missing`);
    const settings = await ensurePretrainedModel(info.encoder, options.encoderDir, options.log);
    const sessionOptions = {
      graphOptimizationLevel: 'all' as const,
      ...(options.threads === undefined ? {} : { intraOpNumThreads: options.threads, interOpNumThreads: 1 }),
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    };
    const admit = options.admit ?? admitAll;
    const { model, encoder } = await openWordEncoder(info.encoder, settings, {
      cacheBytes: options.cacheBytes,
      threads: options.threads,
      admit,
      wordLayer: info.wordLayer,
    });
    try {
      const head = await ort.InferenceSession.create(headPath, sessionOptions);
      return new SpanReader(
        encoder,
        head,
        async () => {
          await head.release();
          await model.close();
        },
        admit,
      );
    } catch (error) {
      await model.close();
      throw error;
    }
  }

  get cost(): ReaderCost {
    return { encoderPasses: this.encoder.passesRun, headRuns: this.headRuns };
  }

  get dimension(): number {
    return this.encoder.dimension;
  }

  /** Each question's sentence embedding, from the same encoder pass that gives the reader its word states. */
  /** The identity of the encoder behind questionVectors: equal to a retrieval embedder's id when they are the same model. */
  get encoderId(): string {
    return this.encoder.encoderId;
  }

  async questionVectors(questions: readonly QuestionAnalysis[]): Promise<Float32Array[]> {
    return (await this.encoder.questions(questions.map(questionWords))).map((states) => states.sentence);
  }

  /** Sentence embeddings of short texts, comparable with questionVectors. */
  embedQueries(texts: readonly string[]): Promise<Float32Array> {
    return this.encoder.embedQueries(texts);
  }

  /** The best span of each passage for its question; null when the passage has no words to read. */
  async read(inputs: ReadonlyArray<{ question: QuestionAnalysis; text: string }>): Promise<Array<ReadSpan | null>> {
    const passages = inputs.map((input) => readerPassage(input.text, MAX_PASSAGE_WORDS));
    const readable = inputs.flatMap((input, i) => (passages[i]!.words.length > 0 && input.question.tokens.length > 0 ? [i] : []));
    const out: Array<ReadSpan | null> = inputs.map(() => null);
    const questionStates = await this.encoder.questions(readable.map((i) => questionWords(inputs[i]!.question)));
    const questionOf = new Map(readable.map((i, r) => [i, questionStates[r]!]));
    const passageStates = await this.encoder.passagesOf(readable.map((i) => ({ text: inputs[i]!.text, words: passages[i]!.words.map((word) => word.text) })));
    const states = new Map(readable.map((i, r) => [i, passageStates[r]!]));
    const byLength = [...readable].sort((a, b) => passages[a]!.words.length - passages[b]!.words.length);
    for (let start = 0; start < byLength.length; start += HEAD_BATCH) {
      const group = byLength.slice(start, start + HEAD_BATCH);
      const logits = await this.runHead(
        group.map((i) => ({
          passage: states.get(i)!,
          features: wordFeatures(inputs[i]!.question, passages[i]!),
          question: questionOf.get(i)!,
          questionFeatures: questionFeatures(inputs[i]!.question),
        })),
      );
      group.forEach((i, g) => {
        out[i] = bestSpan(passages[i]!, logits.start[g]!, logits.end[g]!);
      });
    }
    return out;
  }

  private async runHead(
    rows: ReadonlyArray<{ passage: WordStates; features: Float32Array; question: WordStates; questionFeatures: Float32Array }>,
  ): Promise<{ start: Float32Array[]; end: Float32Array[] }> {
    const d = this.encoder.dimension;
    const b = rows.length;
    const lp = Math.max(...rows.map((row) => row.passage.words));
    const lq = Math.max(...rows.map((row) => row.question.words));
    const f = WORD_FEATURES.length;
    const passage = new Float32Array(b * lp * d);
    const features = new Float32Array(b * lp * f);
    const question = new Float32Array(b * lq * d);
    const questionFeatureRows = new Float32Array(b * QUESTION_FEATURES.length);
    rows.forEach((row, r) => {
      passage.set(row.passage.data, r * lp * d);
      features.set(row.features, r * lp * f);
      question.set(row.question.data, r * lq * d);
      questionFeatureRows.set(row.questionFeatures, r * QUESTION_FEATURES.length);
    });
    const lengths = (values: number[]): ort.Tensor => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), [b]);
    const result = await this.admit(() =>
      this.head.run({
        passage: new ort.Tensor('float32', passage, [b, lp, d]),
        passage_features: new ort.Tensor('float32', features, [b, lp, f]),
        passage_lengths: lengths(rows.map((row) => row.passage.words)),
        question: new ort.Tensor('float32', question, [b, lq, d]),
        question_lengths: lengths(rows.map((row) => row.question.words)),
        question_features: new ort.Tensor('float32', questionFeatureRows, [b, QUESTION_FEATURES.length]),
      }),
    );
    this.headRuns++;
    const start = result.start_logits!.data as Float32Array;
    const end = result.end_logits!.data as Float32Array;
    return {
      start: rows.map((row, r) => start.slice(r * lp, r * lp + row.passage.words)),
      end: rows.map((row, r) => end.slice(r * lp, r * lp + row.passage.words)),
    };
  }

  async close(): Promise<void> {
    await this.close_();
  }
}

function questionWords(question: QuestionAnalysis): string[] {
  return question.tokens.map((token) => token.text);
}

function logSoftmax(logits: Float32Array): Float64Array {
  let max = -Infinity;
  for (const value of logits) max = Math.max(max, value);
  let sum = 0;
  for (const value of logits) sum += Math.exp(value - max);
  const log = Math.log(sum) + max;
  return Float64Array.from(logits, (value) => value - log);
}

const isWord = (text: string): boolean => /[\p{L}\p{N}]/u.test(text);

/** The span with the highest start + end score inside one sentence, at most MAX_SPAN_WORDS long, starting and ending on a word. */
export function bestSpan(passage: ReaderPassage, start: Float32Array, end: Float32Array): ReadSpan | null {
  const startLog = logSoftmax(start);
  const endLog = logSoftmax(end);
  let best: { from: number; to: number; score: number } | null = null;
  for (let from = 0; from < passage.words.length; from++) {
    if (!isWord(passage.words[from]!.text)) continue;
    for (let to = from; to < Math.min(passage.words.length, from + MAX_SPAN_WORDS); to++) {
      if (passage.sentenceOf[to] !== passage.sentenceOf[from]) break;
      if (!isWord(passage.words[to]!.text)) continue;
      const score = start[from]! + end[to]!;
      if (best === null || score > best.score) best = { from, to, score };
    }
  }
  if (best === null) return null;
  const sentence = passage.sentenceOf[best.from]!;
  const offset = best.from - passage.positionOf[best.from]!;
  const tokens = passage.sentences[sentence]!.tokens;
  let spanStart = best.from - offset;
  let spanEnd = best.to - offset + 1;
  // A name is not cut after its first words ("Japan" of "Japan Prize"): the span ends where the run of capitalised
  // words does, not across "of" ("Kelvin Kiptum of Kenya"). Its start stays: the reader leaving out a title
  // ("Commissioner Roger Goodell") is mostly right.
  const name = nameRuns(tokens, false).find((run) => run.start < spanEnd && spanEnd < run.end);
  if (name && name.end - spanStart <= MAX_SPAN_WORDS) spanEnd = name.end;
  // A list item of a few words names one thing, and the reader's part of it is a cut: "Per Larsson Sparre", not its
  // last two words; "Prince Leopold of Bavaria", not its first two.
  const item = listItem(tokens);
  if (item && item.start <= spanStart && spanEnd <= item.end) [spanStart, spanEnd] = [item.start, item.end];
  spanEnd = beforeOpenBracket(tokens, spanStart, spanEnd);
  return {
    text: spanText(tokens, spanStart, spanEnd),
    probability: Math.exp(startLog[best.from]! + endLog[best.to]!),
    score: best.score,
    sentence,
    start: spanStart,
    end: spanEnd,
  };
}

/** What opens a list item: "- ", "-: ", "• ". */
const LIST_MARK = /^[-–—•*:]$/;
/** A list item of at most this many words is taken whole. */
const LIST_ITEM_WORDS = 8;

/**
 * The words of a sentence that is a list item naming one thing ("- Prince Leopold of Bavaria - Later a
 * Generalfeldmarschall", "-: Trond Einar Olaussen (Ap)"), after its label ("President: Grazia Francescato"),
 * up to a spaced dash or a bracket; null for any other sentence, and for an item naming two ("X and Y").
 */
function listItem(tokens: readonly Token[]): { start: number; end: number } | null {
  let start = 0;
  while (start < tokens.length && LIST_MARK.test(tokens[start]!.text)) start++;
  if (start === 0) return null;
  let end = start;
  // "Claës-Henrik": a dash inside a word has no space before it.
  const closesItem = (token: Token): boolean => token.text === '(' || (/^[-–—]$/.test(token.text) && token.space !== '');
  while (end < tokens.length && !closesItem(tokens[end]!)) end++;
  for (let t = end - 1; t > start; t--) {
    if (tokens[t]!.text !== ':') continue;
    start = t + 1;
    break;
  }
  while (end > start && !isWord(tokens[end - 1]!.text)) end--;
  const item = tokens.slice(start, end);
  const words = item.filter((token) => isWord(token.text)).length;
  const namesTwo = item.some((token) => token.lower === 'and' || token.text === '&');
  return words > 0 && words <= LIST_ITEM_WORDS && !namesTwo ? { start, end } : null;
}

/** A span that opens a bracket and ends inside it ("London Midland and Scottish Railway (LMS") ends before the bracket. */
function beforeOpenBracket(tokens: readonly Token[], start: number, end: number): number {
  for (let t = end - 1; t > start; t--) {
    if (tokens[t]!.text === ')') return end;
    if (tokens[t]!.text !== '(') continue;
    let cut = t;
    while (cut > start && !isWord(tokens[cut - 1]!.text)) cut--;
    return cut > start ? cut : end;
  }
  return end;
}
