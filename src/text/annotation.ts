/**
 * Text as the answerers read it: sentences of tokens with part of speech, stem and entity
 * type (wink-nlp), and the candidate answer spans of each sentence with the answer types
 * they can fill.
 */
import { annotator } from './language.js';

/** What a question asks for, from its wh-word. NAME covers people and organisations. */
export enum AnswerType {
  NAME = 'NAME',
  DATE = 'DATE',
  PLACE = 'PLACE',
  NUMBER = 'NUMBER',
  THING = 'THING',
}

export interface Token {
  text: string;
  /** Whitespace before the token in the source, so spans can be rebuilt as written. */
  space: string;
  lower: string;
  stem: string;
  /** The dictionary form ("founded" → "found", "won" → "win"), which rewriting a verb needs. */
  lemma: string;
  pos: string;
  stop: boolean;
}

export interface AnnotatedSentence {
  text: string;
  tokens: Token[];
  /** Spans (token ranges, end exclusive) of dates, numbers, amounts and percentages. */
  entities: Array<{ start: number; end: number; type: string }>;
}

export interface Span {
  sentence: number;
  start: number;
  end: number;
  text: string;
  types: ReadonlySet<AnswerType>;
  /** How the span was found: a whole entity or chunk, the tail of one, or two chunks joined. */
  form: SpanForm;
}

export type SpanForm = 'whole' | 'tail' | 'joined';

/** GrowOVER's QA answers are at most 10 tokens; longer candidates are not answers. */
export const MAX_ANSWER_TOKENS = 10;

const CACHE_LIMIT = 20_000;
const cache = new Map<string, AnnotatedSentence[]>();

/** The sentences of `text`, annotated; recent texts are kept, since the same passages come back for many questions. */
export function annotate(text: string): AnnotatedSentence[] {
  const cached = cache.get(text);
  if (cached) return cached;
  const nlp = annotator();
  const { its } = nlp;
  const doc = nlp.readDoc(text);
  const texts = doc.tokens().out() as string[];
  const spaces = doc.tokens().out(its.precedingSpaces) as string[];
  const pos = doc.tokens().out(its.pos) as string[];
  const stops = doc.tokens().out(its.stopWordFlag) as unknown as boolean[];
  // wink-nlp's typings give `its.stem` and `its.lemma` their add-on signatures, which `out` does not accept; they work like `its.normal`.
  // Its lemmatizer leaves some words without a lemma ("Ive" → null): those stand for themselves.
  const stems = doc.tokens().out(its.stem as unknown as typeof its.normal) as string[];
  const lemmas = doc.tokens().out(its.lemma as unknown as typeof its.normal) as string[];
  const entitySpans = (doc.entities().out(its.span) as unknown as Array<[number, number]>).map(([start, end], i) => ({
    start,
    end: end + 1,
    type: (doc.entities().out(its.type) as string[])[i]!,
  }));
  const sentences = (doc.sentences().out(its.span) as unknown as Array<[number, number]>).map(([first, last]): AnnotatedSentence => {
    const tokens: Token[] = [];
    for (let t = first; t <= last; t++) {
      tokens.push({
        text: texts[t]!,
        space: t === first ? '' : spaces[t]!,
        lower: texts[t]!.toLowerCase(),
        stem: stems[t]!.toLowerCase(),
        lemma: (lemmas[t] ?? texts[t]!).toLowerCase(),
        pos: pos[t]!,
        stop: stops[t]!,
      });
    }
    const entities = entitySpans.filter((e) => e.start >= first && e.end <= last + 1).map((e) => ({ ...e, start: e.start - first, end: e.end - first }));
    return { text: spanText(tokens, 0, tokens.length), tokens, entities };
  });
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(text, sentences);
  return sentences;
}

export function spanText(tokens: readonly Token[], start: number, end: number): string {
  return tokens
    .slice(start, end)
    .map((token, i) => (i === 0 ? token.text : token.space + token.text))
    .join('');
}

const NAME_CONNECTORS = new Set(['of', 'de', 'da', 'del', 'van', 'von', 'der', 'la', 'le', "'s", '&']);
const LEADING_PREPOSITIONS = new Set(['since', 'from', 'in', 'on', 'at', 'by', 'until', 'during']);
const NUMBER_ENTITIES = new Set(['CARDINAL', 'MONEY', 'PERCENT', 'ORDINAL']);
const DATE_ENTITIES = new Set(['DATE', 'DURATION', 'TIME']);
const NOUN_PHRASE_POS = new Set(['ADJ', 'NOUN', 'PROPN', 'NUM']);
const isWord = (token: Token): boolean => /[\p{L}\p{N}]/u.test(token.text);
/** The tagger calls some names verbs or nouns ("Manning/VERB"); a capitalised word inside a sentence is a name. */
const isProper = (token: Token, index: number): boolean =>
  token.pos === 'PROPN' || (index > 0 && /^\p{Lu}/u.test(token.text) && ['NOUN', 'VERB', 'ADJ'].includes(token.pos));

/** Maximal runs of tokens passing `inside`, allowing a joiner token where `joins` says so. */
function runs(
  tokens: readonly Token[],
  inside: (token: Token, index: number) => boolean,
  joins: (index: number) => boolean,
): Array<{ start: number; end: number }> {
  const found: Array<{ start: number; end: number }> = [];
  for (let t = 0; t < tokens.length;) {
    if (!inside(tokens[t]!, t)) {
      t++;
      continue;
    }
    let end = t + 1;
    while (end < tokens.length) {
      if (inside(tokens[end]!, end)) end++;
      // A joiner counts only with a token after it: a text may end mid-phrase ("the University of").
      else if (end + 1 < tokens.length && joins(end) && inside(tokens[end + 1]!, end + 1)) end += 2;
      else break;
    }
    found.push({ start: t, end });
    t = end;
  }
  return found;
}

/** The names of a sentence: maximal runs of proper nouns, `joined` across "of", "de", … ("University of Tokyo"). */
export function nameRuns(tokens: readonly Token[], joined = true): Array<{ start: number; end: number }> {
  return runs(tokens, isProper, (t) => joined && NAME_CONNECTORS.has(tokens[t]!.lower) && isProper(tokens[t + 1]!, t + 1));
}

/**
 * Candidate answers of a sentence: entities (dates, numbers), proper-noun runs (names and
 * places, joined across "of", "de", …), and noun phrases; each with the answer types it fits.
 */
export function candidateSpans(sentence: AnnotatedSentence, index: number): Span[] {
  const found = new Map<string, { start: number; end: number; types: Set<AnswerType>; form: SpanForm }>();
  const add = (start: number, end: number, type: AnswerType, form: SpanForm = 'whole'): void => {
    while (start < end && !isWord(sentence.tokens[start]!)) start++;
    while (end > start && !isWord(sentence.tokens[end - 1]!)) end--;
    if (end <= start || end - start > MAX_ANSWER_TOKENS) return;
    const key = `${start}:${end}`;
    const entry = found.get(key) ?? { start, end, types: new Set<AnswerType>(), form };
    entry.types.add(type);
    if (form === 'whole') entry.form = form;
    found.set(key, entry);
  };
  const { tokens } = sentence;
  for (const entity of sentence.entities) {
    let start = entity.start;
    if (DATE_ENTITIES.has(entity.type)) {
      while (start < entity.end && LEADING_PREPOSITIONS.has(tokens[start]!.lower)) start++;
      add(start, entity.end, AnswerType.DATE);
    } else if (NUMBER_ENTITIES.has(entity.type)) {
      add(start, entity.end, AnswerType.NUMBER);
      // A number with the noun after it is the usual answer form ("3.6 million people", "8,848.86 m").
      if (tokens[entity.end]?.pos === 'NOUN') add(start, entity.end + 1, AnswerType.NUMBER);
    }
  }
  // Scores and ranges: "34–19", "4.75–5.00%".
  for (let t = 0; t + 2 < tokens.length; t++) {
    if (tokens[t]!.pos === 'NUM' && /^[-–—]$/.test(tokens[t + 1]!.text) && tokens[t + 2]!.pos === 'NUM') add(t, t + 3, AnswerType.NUMBER);
  }
  const chunks = [
    ...nameRuns(tokens).map((run) => ({ ...run, named: true })),
    ...runs(
      tokens,
      (token) => NOUN_PHRASE_POS.has(token.pos),
      (t) => tokens[t]!.text === '-',
    ).map((run) => ({ ...run, named: false })),
  ];
  for (const { start, end, named } of chunks) {
    const types = named ? [AnswerType.NAME, AnswerType.PLACE, AnswerType.THING] : [AnswerType.THING];
    if (!named && !tokens.slice(start, end).some((token) => token.pos === 'NOUN' || token.pos === 'PROPN')) continue;
    for (const type of types) add(start, end, type);
    // Heads come last ("NFL Commissioner Roger Goodell" → "Roger Goodell", "Goodell").
    for (let from = start + 1; from < end; from++) for (const type of types) add(from, end, type, 'tail');
  }
  // Joined phrases: "Subutai and Jebe", "principle of inclusions and components".
  const sorted = chunks.filter((chunk) => chunk.end - chunk.start >= 1).sort((a, b) => a.start - b.start);
  for (const left of sorted) {
    for (const right of sorted) {
      const gap = right.start - left.end;
      if (gap < 1 || gap > 2) continue;
      const between = tokens.slice(left.end, right.start).map((token) => token.lower);
      if (!['of', 'and', 'for', 'in', ','].includes(between[0]!) || (gap === 2 && !['the', 'a', 'an', 'and'].includes(between[1]!))) continue;
      add(left.start, right.end, left.named && right.named ? AnswerType.NAME : AnswerType.THING, 'joined');
    }
  }
  return [...found.values()].map(({ start, end, types, form }) => ({ sentence: index, start, end, types, form, text: spanText(tokens, start, end) }));
}
