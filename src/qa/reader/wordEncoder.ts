/**
 * Contextual states of words from a pretrained encoder: each word is split into the model's word
 * pieces, the sequence (with the model's query or passage prefix) runs through the model, and a
 * word's state is the mean of its pieces' states. A passage does not depend on the question, so
 * its states are computed once per text and kept (up to a memory budget): the same passages come
 * back for many questions, and the encoder pass is the reader's main cost.
 */
import { LRUCache } from 'lru-cache';
import { createOnnxEmbedder, type OnnxEmbedder } from '../../embedding/onnx.js';
import { PRETRAINED_MODELS } from '../../embedding/pretrained.js';
import type { OnnxEmbedderConfig, PretrainedModelName, TextRole } from '../../embedding/types.js';
import { normalizeRows } from '../../embedding/vectors.js';
import { admitAll, type Admission } from '../../platform/fairShares.js';

/** BERT's position table: a longer passage is read in several windows. */
const MAX_PIECES = 512;

export interface WordStates {
  /** words × dimension, row-major. */
  data: Float32Array;
  words: number;
  /**
   * The text's sentence embedding: every piece's state averaged and L2-normalised, as the
   * encoder embeds a text (exact for a text that fits one window).
   */
  sentence: Float32Array;
}

/**
 * A pretrained encoder's ONNX model and a WordEncoder over it, the words' states taken from
 * `wordLayer` (an inner tensor of the model; its last layer's when absent): the reader and the
 * preparation of its training data open the encoder alike. The caller closes the model.
 */
export async function openWordEncoder(
  name: PretrainedModelName,
  settings: Omit<OnnxEmbedderConfig, 'kind'>,
  options: { cacheBytes: number; threads?: number; admit?: Admission; wordLayer?: string },
): Promise<{ model: OnnxEmbedder; encoder: WordEncoder }> {
  const { wordLayer, cacheBytes, threads, admit } = options;
  const model = await createOnnxEmbedder({ ...settings, threads, innerOutputs: wordLayer ? [wordLayer] : [] });
  const { queryPrefix, passagePrefix } = PRETRAINED_MODELS[name];
  return { model, encoder: new WordEncoder(model, { cacheBytes, prefixes: { query: queryPrefix, passage: passagePrefix }, admit, wordLayer }) };
}

export class WordEncoder {
  readonly dimension: number;
  private readonly pieces = new LRUCache<string, number[]>({ max: 200_000 });
  private readonly passages: LRUCache<string, WordStates>;
  /** Questions come back between deciding, linking and reading, and in conversations. */
  private readonly queries = new LRUCache<string, WordStates>({ max: 2_000 });
  private readonly special: { first: number[]; last: number[] };
  private readonly prefixes: Record<TextRole, number[]>;
  /** Encoder passes run, for the cost report. */
  passesRun = 0;
  /** Each encoder pass is a unit of CPU work, run when its caller's turn comes. */
  private readonly admit: Admission;
  /** The inner tensor that gives the words' states (a middle layer's output); the last layer's when null. */
  private readonly wordLayer: string | null;

  constructor(
    private readonly model: OnnxEmbedder,
    options: { cacheBytes: number; prefixes: Record<TextRole, string>; admit?: Admission; wordLayer?: string },
  ) {
    this.dimension = model.dimension;
    this.admit = options.admit ?? admitAll;
    this.wordLayer = options.wordLayer ?? null;
    this.passages = new LRUCache({ maxSize: Math.max(1, options.cacheBytes), sizeCalculation: (states) => Math.max(1, states.data.byteLength) });
    const bare = model.tokenizer.encode('').ids;
    this.special = { first: bare.slice(0, 1), last: bare.slice(1) };
    this.prefixes = { query: this.piecesOf(options.prefixes.query.trim()), passage: this.piecesOf(options.prefixes.passage.trim()) };
  }

  /** States of the words of each question. */
  /** The encoder's identity, as embedders name themselves. */
  get encoderId(): string {
    return this.model.id;
  }

  async questions(wordLists: readonly string[][]): Promise<WordStates[]> {
    return this.cached(
      this.queries,
      wordLists.map((words) => ({ key: words.join('\u0000'), words })),
      'query',
    );
  }

  /** Sentence embeddings of whole texts, as queries (for comparing a question with short texts). */
  async embedQueries(texts: readonly string[]): Promise<Float32Array> {
    const out = new Float32Array(texts.length * this.dimension);
    for (let i = 0; i < texts.length; i++) out.set(await this.admit(() => this.model.embed([texts[i]!], 'query')), i * this.dimension);
    return out;
  }

  /** States of the words of each passage, from the cache when the same text was read before. */
  passagesOf(items: ReadonlyArray<{ text: string; words: string[] }>): Promise<WordStates[]> {
    return this.cached(
      this.passages,
      items.map(({ text, words }) => ({ key: `${words.length}:${text}`, words })),
      'passage',
    );
  }

  private async cached(
    cache: LRUCache<string, WordStates>,
    items: ReadonlyArray<{ key: string; words: readonly string[] }>,
    role: TextRole,
  ): Promise<WordStates[]> {
    const out: WordStates[] = [];
    for (const { key, words } of items) {
      let states = cache.get(key);
      if (!states) {
        states = await this.encode(words, role);
        cache.set(key, states);
      }
      out.push(states);
    }
    return out;
  }

  private piecesOf(word: string): number[] {
    const known = this.pieces.get(word);
    if (known) return known;
    const ids = word === '' ? [] : this.model.tokenizer.encode(word, { add_special_tokens: false }).ids;
    this.pieces.set(word, ids);
    return ids;
  }

  /** One sequence per window of at most MAX_PIECES pieces; each word's state is its pieces' mean. */
  private async encode(words: readonly string[], role: TextRole): Promise<WordStates> {
    const d = this.dimension;
    const data = new Float32Array(words.length * d);
    const sentence = new Float32Array(d);
    let pieces = 0;
    const prefix = this.prefixes[role];
    const budget = MAX_PIECES - this.special.first.length - this.special.last.length - prefix.length;
    let start = 0;
    while (start < words.length) {
      const ids = [...this.special.first, ...prefix];
      const spans: Array<{ from: number; to: number }> = [];
      let end = start;
      while (end < words.length) {
        let pieces = this.piecesOf(words[end]!);
        if (ids.length - this.special.first.length - prefix.length + pieces.length > budget) {
          if (end > start) break;
          pieces = []; // a single word longer than a window is read as nothing
        }
        spans.push({ from: ids.length, to: ids.length + pieces.length });
        ids.push(...pieces);
        end++;
      }
      ids.push(...this.special.last);
      const { data: states, inner } = await this.admit(() => this.model.tokenStates([ids]));
      const wordStates = this.wordLayer === null ? states : inner[this.wordLayer]!;
      this.passesRun++;
      for (let p = 0; p < ids.length; p++) for (let j = 0; j < d; j++) sentence[j]! += states[p * d + j]!;
      pieces += ids.length;
      spans.forEach(({ from, to }, i) => {
        if (to === from) return; // a word with no pieces (control characters) keeps a zero state
        const row = (start + i) * d;
        for (let p = from; p < to; p++) for (let j = 0; j < d; j++) data[row + j]! += wordStates[p * d + j]! / (to - from);
      });
      start = end;
    }
    if (pieces > 0) for (let j = 0; j < d; j++) sentence[j]! /= pieces;
    return { data, words: words.length, sentence: normalizeRows(sentence, d) };
  }
}
