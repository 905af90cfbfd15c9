/**
 * A WordPiece tokenizer driven by a Hugging Face `tokenizer.json`, enough for BERT-family
 * sentence-transformers (all-MiniLM-L6-v2, bge-small, e5-small, all-mpnet-base-v2, ...):
 *
 * - normalizer: BertNormalizer, or a Sequence of NFC/NFD/NFKC/NFKD, Lowercase, StripAccents, Strip;
 * - pre-tokenizer: BertPreTokenizer, Whitespace or WhitespaceSplit (or a Sequence of them);
 * - model: WordPiece (greedy longest match first, `##` continuation, `[UNK]` for the rest);
 * - post-processor: BertProcessing, RobertaProcessing or TemplateProcessing (single sequence).
 *
 * Anything else is refused with an error naming the unsupported part, rather than silently
 * producing different token ids than the model was trained with.
 */
import { EmbedderConfigError } from './types.js';

interface TokenizerJson {
  truncation?: { max_length?: number } | null;
  padding?: { pad_id?: number } | null;
  normalizer?: NormalizerJson | null;
  pre_tokenizer?: PreTokenizerJson | null;
  post_processor?: PostProcessorJson | null;
  model?: {
    type?: string;
    vocab?: Record<string, number>;
    unk_token?: string;
    continuing_subword_prefix?: string;
    max_input_chars_per_word?: number;
  };
}

interface NormalizerJson {
  type: string;
  clean_text?: boolean;
  handle_chinese_chars?: boolean;
  strip_accents?: boolean | null;
  lowercase?: boolean;
  normalizers?: NormalizerJson[];
  left?: boolean;
  right?: boolean;
}

interface PreTokenizerJson {
  type: string;
  pretokenizers?: PreTokenizerJson[];
}

type TemplatePiece = { SpecialToken: { id: string; type_id?: number } } | { Sequence: { id: string; type_id?: number } };

interface PostProcessorJson {
  type: string;
  cls?: [string, number];
  sep?: [string, number];
  single?: TemplatePiece[];
  special_tokens?: Record<string, { id: string; ids: number[] }>;
  processors?: PostProcessorJson[];
}

export interface Encoding {
  ids: number[];
  typeIds: number[];
}

// Applied after white space became ' ', so \t, \n and \r are spaces by then, not removed.
const CONTROL = /[\p{C}\uFFFD]/gu;
const WHITESPACE = /[\s\u00A0\u2000-\u200A\u202F\u205F\u3000]/gu;
const COMBINING = /\p{Mn}/gu;
// BERT treats all ASCII non-alphanumeric symbols as punctuation too.
const PUNCTUATION = /[\p{P}!-\/:-@\[-`{-~]/u;
const CJK = /([\u4E00-\u9FFF\u3400-\u4DBF\u{20000}-\u{2A6DF}\u{2A700}-\u{2B73F}\u{2B740}-\u{2B81F}\u{2B820}-\u{2CEAF}\uF900-\uFAFF\u{2F800}-\u{2FA1F}])/gu;

type Step = (text: string) => string;

function normalizerSteps(spec: NormalizerJson | null | undefined): Step[] {
  if (!spec) return [];
  switch (spec.type) {
    case 'BertNormalizer': {
      const steps: Step[] = [];
      if (spec.clean_text !== false) steps.push((t) => t.replace(WHITESPACE, ' ').replace(CONTROL, ''));
      if (spec.handle_chinese_chars !== false) steps.push((t) => t.replace(CJK, ' $1 '));
      const lowercase = spec.lowercase !== false;
      const strip = spec.strip_accents ?? lowercase;
      if (strip) steps.push((t) => t.normalize('NFD').replace(COMBINING, ''));
      if (lowercase) steps.push((t) => t.toLowerCase());
      return steps;
    }
    case 'Sequence':
      return (spec.normalizers ?? []).flatMap(normalizerSteps);
    case 'NFC':
    case 'NFD':
    case 'NFKC':
    case 'NFKD': {
      const form = spec.type;
      return [(t) => t.normalize(form)];
    }
    case 'Lowercase':
      return [(t) => t.toLowerCase()];
    case 'StripAccents':
      return [(t) => t.replace(COMBINING, '')];
    case 'Strip':
      return [(t) => (spec.left === false ? t : t.trimStart()), (t) => (spec.right === false ? t : t.trimEnd())];
    default:
      throw new EmbedderConfigError(`tokenizer.json: normalizer "${spec.type}" is not supported`);
  }
}

function splitBert(text: string): string[] {
  const words: string[] = [];
  for (const chunk of text.split(/\s+/u)) {
    if (chunk === '') continue;
    let current = '';
    for (const ch of chunk) {
      if (PUNCTUATION.test(ch)) {
        if (current) words.push(current);
        words.push(ch);
        current = '';
      } else current += ch;
    }
    if (current) words.push(current);
  }
  return words;
}

function splitWhitespace(text: string): string[] {
  // Hugging Face's Whitespace pre-tokenizer: \w+|[^\w\s]+
  return text.match(/[\p{L}\p{N}\p{M}_]+|[^\p{L}\p{N}\p{M}_\s]+/gu) ?? [];
}

function preTokenizer(spec: PreTokenizerJson | null | undefined): (text: string) => string[] {
  if (!spec) return (t) => t.split(/\s+/u).filter(Boolean);
  switch (spec.type) {
    case 'BertPreTokenizer':
      return splitBert;
    case 'Whitespace':
      return splitWhitespace;
    case 'WhitespaceSplit':
      return (t) => t.split(/\s+/u).filter(Boolean);
    case 'Sequence': {
      const parts = (spec.pretokenizers ?? []).map(preTokenizer);
      return (t) => parts.reduce<string[]>((words, split) => words.flatMap(split), [t]);
    }
    default:
      throw new EmbedderConfigError(`tokenizer.json: pre-tokenizer "${spec.type}" is not supported`);
  }
}

export class WordPieceTokenizer {
  readonly maxLength: number;
  readonly padId: number;
  private readonly normalize: Step[];
  private readonly split: (text: string) => string[];
  private readonly vocab: Map<string, number>;
  private readonly unkId: number;
  private readonly prefix: string;
  private readonly maxCharsPerWord: number;
  private readonly before: { id: number; typeId: number }[] = [];
  private readonly after: { id: number; typeId: number }[] = [];
  private sequenceTypeId = 0;

  constructor(json: TokenizerJson, options: { maxLength?: number } = {}) {
    const model = json.model;
    if (!model || model.type !== 'WordPiece') {
      throw new EmbedderConfigError(`tokenizer.json: model type "${model?.type}" is not supported (only WordPiece)`);
    }
    if (!model.vocab || typeof model.vocab !== 'object') throw new EmbedderConfigError('tokenizer.json: model.vocab is missing');
    this.vocab = new Map(Object.entries(model.vocab));
    const unk = model.unk_token ?? '[UNK]';
    const unkId = this.vocab.get(unk);
    if (unkId === undefined) throw new EmbedderConfigError(`tokenizer.json: the unknown token "${unk}" is not in the vocabulary`);
    this.unkId = unkId;
    this.prefix = model.continuing_subword_prefix ?? '##';
    this.maxCharsPerWord = model.max_input_chars_per_word ?? 100;
    this.normalize = normalizerSteps(json.normalizer);
    this.split = preTokenizer(json.pre_tokenizer);
    this.padId = json.padding?.pad_id ?? this.vocab.get('[PAD]') ?? this.vocab.get('<pad>') ?? 0;
    this.setupPostProcessor(json.post_processor);
    const limit = options.maxLength ?? json.truncation?.max_length ?? 256;
    if (!Number.isInteger(limit) || limit <= this.before.length + this.after.length) {
      throw new EmbedderConfigError(`tokenizer: maxLength must be an integer above ${this.before.length + this.after.length}, got ${limit}`);
    }
    this.maxLength = limit;
  }

  private setupPostProcessor(spec: PostProcessorJson | null | undefined): void {
    if (!spec) return;
    const special = (token: string, id?: number): { id: number; typeId: number } => {
      const found = id ?? this.vocab.get(token);
      if (found === undefined) throw new EmbedderConfigError(`tokenizer.json: special token "${token}" has no id`);
      return { id: found, typeId: 0 };
    };
    switch (spec.type) {
      case 'BertProcessing':
      case 'RobertaProcessing':
        if (!spec.cls || !spec.sep) throw new EmbedderConfigError(`tokenizer.json: ${spec.type} without cls/sep`);
        this.before.push(special(spec.cls[0], spec.cls[1]));
        this.after.push(special(spec.sep[0], spec.sep[1]));
        return;
      case 'TemplateProcessing': {
        let seen = false;
        for (const piece of spec.single ?? []) {
          if ('Sequence' in piece) {
            seen = true;
            this.sequenceTypeId = piece.Sequence.type_id ?? 0;
            continue;
          }
          const name = piece.SpecialToken.id;
          const ids = spec.special_tokens?.[name]?.ids ?? [special(name).id];
          for (const id of ids) (seen ? this.after : this.before).push({ id, typeId: piece.SpecialToken.type_id ?? 0 });
        }
        return;
      }
      case 'Sequence':
        for (const inner of spec.processors ?? []) {
          if (inner.type !== 'ByteLevel') this.setupPostProcessor(inner);
        }
        return;
      case 'ByteLevel':
        return;
      default:
        throw new EmbedderConfigError(`tokenizer.json: post-processor "${spec.type}" is not supported`);
    }
  }

  /** WordPiece pieces of one pre-tokenized word (as ids). */
  private wordIds(word: string, out: number[]): void {
    const chars = Array.from(word);
    if (chars.length > this.maxCharsPerWord) {
      out.push(this.unkId);
      return;
    }
    const pieces: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (start < end) {
        const piece = (start > 0 ? this.prefix : '') + chars.slice(start, end).join('');
        found = this.vocab.get(piece);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) {
        out.push(this.unkId);
        return;
      }
      pieces.push(found);
      start = end;
    }
    out.push(...pieces);
  }

  /** Token ids (with special tokens, truncated to maxLength) and token type ids of `text`. */
  encode(text: string): Encoding {
    let normalized = text;
    for (const step of this.normalize) normalized = step(normalized);
    const body: number[] = [];
    const room = this.maxLength - this.before.length - this.after.length;
    for (const word of this.split(normalized)) {
      this.wordIds(word, body);
      if (body.length >= room) break;
    }
    body.length = Math.min(body.length, room);
    const ids = [...this.before.map((t) => t.id), ...body, ...this.after.map((t) => t.id)];
    const typeIds = [...this.before.map((t) => t.typeId), ...body.map(() => this.sequenceTypeId), ...this.after.map((t) => t.typeId)];
    return { ids, typeIds };
  }
}
