/**
 * The relation between an old sentence and a new one (ENTAILMENT / CONTRADICTION / NEUTRAL),
 * predicted by the addon's Classifier from features computed here: embedding similarity, word
 * overlap, numbers, dates and names that differ (wink-nlp's entities and proper nouns),
 * negation, length and containment. No NLI model can be fetched here, so this small model,
 * trained on controlled edits of real sentences (`chronoql train-relations`), stands in for one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Classifier, type ClassifierModelJson } from '../native/index.js';
import { modelsDir } from '../platform/paths.js';
import { annotate, type AnnotatedSentence } from '../text/annotation.js';

export const RELATION_CLASSES = ['ENTAILMENT', 'CONTRADICTION', 'NEUTRAL'] as const;
export type Relation = (typeof RELATION_CLASSES)[number];

export const RELATION_FEATURES = [
  'similarity',
  'tokenJaccard',
  'newCoveredByOld',
  'oldCoveredByNew',
  'numbersOnlyInNew',
  'numbersOnlyInOld',
  'datesDiffer',
  'namesOnlyInNew',
  'namesOnlyInOld',
  'negationMismatch',
  'lengthRatio',
  'containment',
  'predicateOverlap',
  'entitiesDiffer',
  'tenseChanged',
] as const;

const NUMBER_WORDS = new Set(
  'one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion first second third fourth fifth'.split(
    ' ',
  ),
);
/** Words that put a statement in the future: "will", "scheduled", "upcoming"; their coming or going revises the statement. */
const FUTURE = new Set(['will', 'scheduled', 'upcoming', 'expected', 'planned', 'due', 'shall']);
const NEGATIONS = new Set(['not', "n't", 'no', 'never', 'none', 'nor', 'without', 'neither', 'nobody', 'nothing']);
const isWord = (text: string): boolean => /[\p{L}\p{N}]/u.test(text);

interface SentenceFacts {
  words: string[];
  content: Set<string>;
  /** Content stems that are not names or numbers: what the sentence says about its entities. */
  predicate: Set<string>;
  numbers: Set<string>;
  dates: Set<string>;
  names: Set<string>;
  negations: number;
  future: boolean;
  normalized: string;
}

function facts(text: string): SentenceFacts {
  const sentences = annotate(text);
  const tokens = sentences.flatMap((sentence: AnnotatedSentence) => sentence.tokens);
  const dates = new Set<string>();
  for (const sentence of sentences) {
    for (const entity of sentence.entities) {
      if (entity.type === 'DATE' || entity.type === 'DURATION' || entity.type === 'TIME')
        dates.add(
          sentence.tokens
            .slice(entity.start, entity.end)
            .map((t) => t.lower)
            .join(' '),
        );
    }
  }
  const names = new Set<string>();
  for (const sentence of sentences) {
    let run: string[] = [];
    sentence.tokens.forEach((token, i) => {
      const proper = token.pos === 'PROPN' || (i > 0 && /^\p{Lu}/u.test(token.text) && token.pos !== 'PUNCT');
      if (proper) run.push(token.lower);
      if (!proper || i === sentence.tokens.length - 1) {
        if (run.length > 0) names.add(run.join(' '));
        run = [];
      }
    });
  }
  const words = tokens.filter((token) => isWord(token.text)).map((token) => token.lower);
  return {
    words,
    content: new Set(tokens.filter((token) => isWord(token.text) && !token.stop).map((token) => token.stem)),
    predicate: new Set(
      tokens
        .filter(
          (token) =>
            isWord(token.text) && !token.stop && token.pos !== 'PROPN' && token.pos !== 'NUM' && !/\d/.test(token.text) && !NUMBER_WORDS.has(token.lower),
        )
        .map((token) => token.stem),
    ),
    numbers: new Set(tokens.filter((token) => /\d/.test(token.text) || NUMBER_WORDS.has(token.lower)).map((token) => token.lower)),
    dates,
    names,
    negations: tokens.filter((token) => NEGATIONS.has(token.lower)).length,
    future: tokens.some((token) => FUTURE.has(token.lower)),
    normalized: words.join(' '),
  };
}

const share = <T>(of: ReadonlySet<T>, within: ReadonlySet<T>): number => {
  if (of.size === 0) return 1;
  let held = 0;
  for (const item of of) if (within.has(item)) held++;
  return held / of.size;
};
const onlyIn = <T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number => Math.min(3, [...a].filter((item) => !b.has(item)).length) / 3;

function jaccard<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  const union = new Set([...a, ...b]);
  if (union.size === 0) return 0;
  let shared = 0;
  for (const item of a) if (b.has(item)) shared++;
  return shared / union.size;
}

/** The feature row of an (old, new) pair, in RELATION_FEATURES order; `similarity` is the encoders' cosine. */
export function relationFeatures(oldText: string, newText: string, similarity: number): number[] {
  const o = facts(oldText);
  const n = facts(newText);
  return [
    similarity,
    jaccard(new Set(o.words), new Set(n.words)),
    share(n.content, o.content),
    share(o.content, n.content),
    onlyIn(n.numbers, o.numbers),
    onlyIn(o.numbers, n.numbers),
    o.dates.size > 0 && n.dates.size > 0 && [...n.dates].some((date) => !o.dates.has(date)) ? 1 : 0,
    onlyIn(n.names, o.names),
    onlyIn(o.names, n.names),
    o.negations % 2 !== n.negations % 2 ? 1 : 0,
    Math.min(o.words.length, n.words.length) / Math.max(1, o.words.length, n.words.length),
    o.normalized !== '' && n.normalized !== '' && (n.normalized.includes(o.normalized) || o.normalized.includes(n.normalized)) ? 1 : 0,
    jaccard(o.predicate, n.predicate),
    [...n.names].some((x) => !o.names.has(x)) || [...n.numbers].some((x) => !o.numbers.has(x)) || [...n.dates].some((x) => !o.dates.has(x)) ? 1 : 0,
    o.future !== n.future ? 1 : 0,
  ];
}

export const DEFAULT_RELATIONS_PATH = (): string => join(modelsDir(), 'sentence-relations.json');

export class RelationClassifier {
  private constructor(private readonly classifier: Classifier) {}

  static fromModel(model: ClassifierModelJson): RelationClassifier {
    const classifier = Classifier.fromJson(model);
    if (classifier.features.join() !== RELATION_FEATURES.join() || classifier.classes.join() !== RELATION_CLASSES.join()) {
      throw new RangeError(`sentence relation model must have features [${RELATION_FEATURES.join(', ')}] and classes [${RELATION_CLASSES.join(', ')}]`);
    }
    return new RelationClassifier(classifier);
  }

  static load(path = DEFAULT_RELATIONS_PATH()): RelationClassifier {
    return RelationClassifier.fromModel(JSON.parse(readFileSync(path, 'utf8')) as ClassifierModelJson);
  }

  /** Class probabilities of many pairs in one native call. */
  async predict(rows: readonly number[][]): Promise<Array<Record<Relation, number>>> {
    if (rows.length === 0) return [];
    const p = await this.classifier.scoreBatch(rows);
    return rows.map((_, r) => ({ ENTAILMENT: p[3 * r]!, CONTRADICTION: p[3 * r + 1]!, NEUTRAL: p[3 * r + 2]! }));
  }
}

/** A word of a sentence as the wording rules compare it (or a mark that sets a phrase off: brackets, commas, dashes). */
interface Word {
  /** Lower-cased; a number without its thousands separators; a mark as itself. */
  key: string;
  /** Capitalized past the sentence's first word: part of a name. */
  name: boolean;
  number: boolean;
  mark: boolean;
}

/** A sentence's words, computed once and compared with many others. */
export interface Wording {
  /** Words and brackets (which the aside rule needs), without other punctuation. */
  words: Word[];
  /** Words with every mark that can set a phrase off. */
  marked: Word[];
}

const TOKEN = /\p{L}[\p{L}\p{M}\p{N}']*|\p{N}+(?:[.,]\p{N}+)*|[(),;:\u2013\u2014]/gu;
const BRACKETS = new Set(['(', ')']);
/** Number words and ordinals: one letter apart ("three"/"there", "million"/"billion") is never a typo there. */
const COUNTING_WORDS = new Set([...NUMBER_WORDS, ...'sixth seventh eighth ninth tenth hundredth thousandth millionth dozen'.split(' ')]);
/** Words that join clauses: a merge or a split adds or drops them without changing what is said. */
const JOINING_WORDS = new Set(['and', 'but', 'however', 'also', 'while', 'whereas', 'then', 'so']);
/** The longest phrase (in words) an aside may have. */
const MAX_ASIDE = 15;

export function wording(text: string): Wording {
  const marked: Word[] = [];
  let words = 0;
  for (const match of text.replace(/[\u2018\u2019]/g, "'").matchAll(TOKEN)) {
    const raw = match[0];
    const number = /^\p{N}/u.test(raw);
    const mark = !/^[\p{L}\p{N}]/u.test(raw);
    marked.push({ key: number ? raw.replaceAll(',', '') : raw.toLowerCase(), name: words > 0 && /^\p{Lu}/u.test(raw), number, mark });
    if (!mark) words++;
  }
  return { words: marked.filter((word) => !word.mark || BRACKETS.has(word.key)), marked };
}

/** The one character edit between two different words (Damerau: a transposition counts as one), or null. */
function singleEdit(a: string, b: string): 'substitution' | 'transposition' | 'insertion' | null {
  if (Math.abs(a.length - b.length) > 1) return null;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return 'substitution';
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2) ? 'transposition' : null;
  }
  const [shorter, longer] = a.length < b.length ? [a, b] : [b, a];
  return shorter.slice(i) === longer.slice(i + 1) ? 'insertion' : null;
}

/**
 * A misspelling and its fix: one character edit, no digits, no number word or negation. A name
 * only counts with five or more letters and no substituted letter; a common word with three or
 * more for swapped letters ("teh"), four for an added or dropped one, five for a substituted one:
 * short words and names one letter apart are often different words ("east"/"west", "Karl"/"Carl").
 */
function isTypoFix(a: Word, b: Word): boolean {
  if (a.number || b.number || a.mark || b.mark || /\d/.test(a.key + b.key)) return false;
  if ([a.key, b.key].some((key) => COUNTING_WORDS.has(key) || NEGATIONS.has(key) || key === 'ever')) return false;
  const edit = singleEdit(a.key, b.key);
  const longest = Math.max(a.key.length, b.key.length);
  if (!edit) return false;
  if (a.name || b.name) return edit !== 'substitution' && longest >= 5;
  return longest >= (edit === 'substitution' ? 5 : edit === 'insertion' ? 4 : 3);
}

/** A word split or joined ("alot" / "a lot", "co-operate" / "cooperate"): the same letters, numbers aside. */
const sameLettersRespaced = (a: readonly Word[], b: readonly Word[]): boolean =>
  [...a, ...b].every((word) => !word.number && !word.mark) && a.map((word) => word.key).join('') === b.map((word) => word.key).join('');

/** The parts of two word lists between their common beginning and common end. */
function middles(a: readonly Word[], b: readonly Word[]): { oldMiddle: Word[]; newMiddle: Word[]; before: Word | undefined; after: Word | undefined } {
  let head = 0;
  while (head < a.length && head < b.length && a[head]!.key === b[head]!.key) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail]!.key === b[b.length - 1 - tail]!.key) tail++;
  return { oldMiddle: a.slice(head, a.length - tail), newMiddle: b.slice(head, b.length - tail), before: a[head - 1], after: a[a.length - tail] };
}

/** The mark that closes a phrase each mark opens. */
const CLOSER: ReadonlyMap<string, string> = new Map([
  ['(', ')'],
  [',', ','],
  ['\u2013', '\u2013'],
  ['\u2014', '\u2014'],
]);

/**
 * One side is the other with a phrase added that is set off on both sides (by brackets, commas
 * or dashes, the marks being the added phrase's own or its neighbours'), has no negation, and is
 * short: an aside ("X (born 1950) did", "X, also known as Y, did") adds to the sentence and
 * takes nothing back.
 */
function isAside(shorter: readonly Word[], longer: readonly Word[]): boolean {
  const { oldMiddle, newMiddle, before, after } = middles(shorter, longer);
  if (oldMiddle.length > 0 || newMiddle.length === 0) return false;
  const words = newMiddle.filter((word) => !word.mark);
  if (words.length === 0 || words.length > MAX_ASIDE || words.some((word) => NEGATIONS.has(word.key))) return false;
  // The phrase's marks are its own first and last tokens, or, the added phrase having been
  // read one token off, the mark just before it or just after it.
  const first = newMiddle[0]!;
  const last = newMiddle[newMiddle.length - 1]!;
  const openers = [first.mark ? first.key : undefined, before?.key].flatMap((key) => (key === undefined ? [] : [key]));
  const closers = [last.mark ? last.key : undefined, after?.key].flatMap((key) => (key === undefined ? [] : [key]));
  const setOff = (opener: string, closer: string): boolean => CLOSER.get(opener) === closer;
  if (first.mark && last.mark && setOff(first.key, last.key)) return true;
  return (first.mark || last.mark) && openers.some((opener) => closers.some((closer) => setOff(opener, closer)));
}

/** b is a with two adjacent stretches of two or more words swapped: a clause moved ("In 1990, X did Y" / "X did Y in 1990"). */
function isClauseMove(a: readonly Word[], b: readonly Word[]): boolean {
  if (a.length !== b.length) return false;
  for (let cut = 2; cut <= a.length - 2; cut++) {
    if (b.every((word, i) => word.key === a[(i + cut) % a.length]!.key)) return true;
  }
  return false;
}

/**
 * What the wording alone settles about an (old, new) pair, before any model: ENTAILMENT when
 * the new sentence only fixes a misspelling (one or two words), changes punctuation or capitals,
 * moves a clause, or adds or drops one aside; CONTRADICTION when exactly one number, or one name
 * for another name, is replaced and nothing else changes; null when the words say no more (the
 * encoder and the classifier decide).
 */
export function wordingRelation(before: Wording, after: Wording): Relation | null {
  const { oldMiddle, newMiddle } = middles(before.words, after.words);
  if (oldMiddle.length === 0 && newMiddle.length === 0) return 'ENTAILMENT';
  if (isAside(before.marked, after.marked) || isAside(after.marked, before.marked)) return 'ENTAILMENT';
  if (oldMiddle.length === newMiddle.length) {
    const differing = oldMiddle.flatMap((word, i) => (word.key === newMiddle[i]!.key ? [] : [[word, newMiddle[i]!] as const]));
    if (differing.length <= 2 && differing.every(([o, n]) => isTypoFix(o, n))) return 'ENTAILMENT';
    if (isClauseMove(oldMiddle, newMiddle)) return 'ENTAILMENT';
  }
  if (sameLettersRespaced(oldMiddle, newMiddle)) return 'ENTAILMENT';
  const allNumbers = (words: readonly Word[]): boolean => words.length > 0 && words.every((word) => word.number);
  const allNames = (words: readonly Word[]): boolean => words.length > 0 && words.length <= 4 && words.every((word) => word.name);
  if ((allNumbers(oldMiddle) && allNumbers(newMiddle)) || (allNames(oldMiddle) && allNames(newMiddle))) return 'CONTRADICTION';
  return null;
}

/** Sentences joined into one (a merge) or cut apart (a split): the words of a run, one after another. */
export function joinWordings(parts: readonly Wording[]): Wording {
  return { words: parts.flatMap((part) => part.words), marked: parts.flatMap((part) => part.marked) };
}

/** Whether a merge or a split says the same words: up to punctuation, clause-joining words, or what wordingRelation calls an entailment. */
export function sameWordingJoined(before: Wording, after: Wording): boolean {
  const keys = (side: Wording): string => side.words.flatMap((word) => (JOINING_WORDS.has(word.key) ? [] : [word.key])).join(' ');
  return keys(before) === keys(after) || wordingRelation(before, after) === 'ENTAILMENT';
}
