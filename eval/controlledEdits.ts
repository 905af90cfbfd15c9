/**
 * Controlled edits of real Wikipedia paragraphs (the SQuAD files in data/squad/) as labeled
 * old/new sentence cases for `chronoql eval-labeling --controlled-edits`.
 *
 * Every distinct paragraph gets one or two edits; the edited sentences carry the edit's gold
 * label, every other sentence is UNCHANGED:
 * - `typo`: the old text has a misspelt word (two letters swapped, one dropped, doubled or, in
 *   a common word, replaced), the new one fixes it: UNCHANGED;
 * - `merge` / `split`: two sentences joined by a semicolon, or one split at a semicolon or a
 *   coordinating conjunction: UNCHANGED (a merged sentence succeeds both old ones);
 * - `insert`: a sentence of a paragraph of another article inserted: NEW;
 * - `year` / `number` / `name`: one year, one other number, or one name (a run of capitalized
 *   words, replaced by one from another article) swapped: CHANGED;
 * - `reorder`: a leading prepositional or subordinate clause moved to the end ("In 1990, X did
 *   Y." → "X did Y in 1990."; "Although Z, X did Y." → "X did Y, although Z.") or back: UNCHANGED;
 * - `parenthetical`: an initialism or an "also known as" short name added after a multi-word
 *   name, in brackets or between commas. UNCHANGED: it restates what the name already says, contradicts nothing,
 *   and every question the old sentence answered still has the same answer. GrowOVER keeps
 *   CHANGED for contradictions; a benchmark item must only be retired when its answer moved.
 *
 * Old and new paragraphs are cut by the product's sentence splitter: an edit whose text the
 * splitter would cut differently from the intended sentences is not used.
 *
 * Split: by article title over both files together (the SHA-256 of the title, even first byte:
 * `tune`, odd: `held-out`), so no article and no inserted or swapped-in material crosses halves.
 * Deterministic: each paragraph's edits come from a PRNG seeded by the seed and the paragraph's
 * text, so a case does not depend on which other paragraphs were read or on `limit`.
 */
import { createHash } from 'node:crypto';
import { seededRandom } from '../src/learning/random.js';
import { splitSentences } from '../src/ingest/sentenceSplitter.js';
import { readQaFile } from './qaFile.js';
import { evaluateLabeler, type LabelingReport, type SentenceCase, type SentenceGold } from './labelingEvaluation.js';
import type { SentenceLabeler } from '../src/ingest/sentenceLabeler.js';

export const EDIT_KINDS = ['typo', 'merge', 'split', 'insert', 'year', 'number', 'name', 'reorder', 'parenthetical'] as const;
export type EditKind = (typeof EDIT_KINDS)[number];

export const DEFAULT_EDIT_SEED = 20261125;

export interface ControlledEditCase extends SentenceCase {
  title: string;
  kinds: EditKind[];
  /** Per new sentence (parallel to `gold`): the edit that made it, or null for an untouched sentence. */
  edits: Array<EditKind | null>;
}

export interface Paragraph {
  title: string;
  text: string;
}

export type EditSplit = 'tune' | 'held-out';

export function splitOfTitle(title: string): EditSplit {
  return createHash('sha256').update(title).digest()[0]! % 2 === 0 ? 'tune' : 'held-out';
}

/** Distinct paragraphs of SQuAD-format QA files, in order of first appearance. */
export async function readParagraphs(files: readonly string[]): Promise<Paragraph[]> {
  const seen = new Set<string>();
  const paragraphs: Paragraph[] = [];
  for (const file of files) {
    for (const item of await readQaFile(file)) {
      for (const document of item.documents) {
        if (seen.has(document.text)) continue;
        seen.add(document.text);
        paragraphs.push({ title: document.title, text: document.text });
      }
    }
  }
  return paragraphs;
}

/** One stretch of the paragraph: the old sentences an edit replaced and the new ones it made (unedited: one sentence on each side). */
interface Stretch {
  old: string[];
  new: string[];
  kind: EditKind | null;
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T | undefined => (items.length === 0 ? undefined : items[Math.floor(random() * items.length)]);

function shuffled<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Whether the splitter cuts `text` into exactly `sentences` (an edit must not move sentence boundaries it did not mean to). */
function splitsAs(sentences: readonly string[]): boolean {
  const found = splitSentences(sentences.join(' ')).map((s) => s.text);
  return found.length === sentences.length && found.every((text, i) => text === sentences[i]);
}

/** Misspells one word: adjacent letters swapped, a letter dropped, doubled or (in a common word) replaced: one character edit each. */
export function misspell(sentence: string, random: Random): string | null {
  const words = [...sentence.matchAll(/(?<![\p{L}\p{N}'-])[A-Za-z][a-z]{4,}(?![\p{L}\p{N}'-])/gu)];
  const word = pick(random, words);
  if (!word) return null;
  const text = word[0];
  const at = 1 + Math.floor(random() * (text.length - 2));
  // A letter swapped for another only in a common word: a name one letter apart is more often another name.
  const kind = Math.floor(random() * (/^[a-z]/.test(text) ? 4 : 3));
  let typo: string;
  if (kind === 3) {
    const letter = 'etaoinshrdlcumwfgypb'[Math.floor(random() * 20)]!;
    if (letter === text[at]) return null;
    typo = text.slice(0, at) + letter + text.slice(at + 1);
  } else if (kind === 0) {
    if (text[at] === text[at + 1]) return null;
    typo = text.slice(0, at) + text[at + 1] + text[at] + text.slice(at + 2);
  } else if (kind === 1) {
    typo = text.slice(0, at) + text.slice(at + 1);
  } else {
    typo = text.slice(0, at + 1) + text[at] + text.slice(at + 1);
  }
  return sentence.slice(0, word.index) + typo + sentence.slice(word.index + text.length);
}

const YEAR = /\b(1[5-9]\d\d|20[0-2]\d)\b/g;
/** Other whole numbers: not part of a word ("50th"), a decimal or a year. */
const NUMBER = /(?<![\d.,])\b\d{1,3}(?:,\d{3})*\b(?![.,]\d)/g;

/** Replaces one year by another 1–15 years away. */
export function swapYear(sentence: string, random: Random): string | null {
  const year = pick(random, [...sentence.matchAll(YEAR)]);
  if (!year) return null;
  const shift = (1 + Math.floor(random() * 15)) * (random() < 0.5 ? -1 : 1);
  return sentence.slice(0, year.index) + String(Number(year[0]) + shift) + sentence.slice(year.index + 4);
}

/** Replaces one number (not a year) by another of about its size. */
export function swapNumber(sentence: string, random: Random): string | null {
  const number = pick(
    random,
    [...sentence.matchAll(NUMBER)].filter((m) => !/^(1[5-9]\d\d|20[0-2]\d)$/.test(m[0])),
  );
  if (!number) return null;
  const value = Number(number[0].replaceAll(',', ''));
  const shift = Math.max(1, Math.round(value * (0.1 + random() * 0.5)));
  const changed = value > shift && random() < 0.5 ? value - shift : value + shift;
  const written = number[0].includes(',') ? changed.toLocaleString('en-US') : String(changed);
  return sentence.slice(0, number.index) + written + sentence.slice(number.index + number[0].length);
}

/** Function words that begin a sentence in capitals only because they begin it. */
const SENTENCE_INITIAL = new Set(
  'a an the this that these those it its he she his her they their there we in on at by for from with after before during as although while when since following under until despite however some many most one all each both several'.split(
    ' ',
  ),
);
const MONTH = /^(January|February|March|April|May|June|July|August|September|October|November|December)$/;

/** Runs of capitalized words after the sentence's first word (names, titles, places). */
function capitalizedRuns(sentence: string): Array<{ text: string; index: number }> {
  return [...sentence.matchAll(/(?<=[\p{Ll},;:] )\p{Lu}\p{Ll}+(?: \p{Lu}\p{Ll}+)*(?![\p{L}\p{N}'-])/gu)]
    .filter((m) => !m[0].split(' ').some((word) => MONTH.test(word) || SENTENCE_INITIAL.has(word.toLowerCase())))
    .map((m) => ({ text: m[0], index: m.index }));
}

/** Replaces one name by a name of another article with as many words. */
export function swapName(sentence: string, otherNames: readonly string[], random: Random): string | null {
  const name = pick(random, capitalizedRuns(sentence));
  if (!name) return null;
  const words = name.text.split(' ').length;
  const other = pick(
    random,
    otherNames.filter((n) => n.split(' ').length === words && !sentence.includes(n)),
  );
  if (!other) return null;
  return sentence.slice(0, name.index) + other + sentence.slice(name.index + name.text.length);
}

const LEADING =
  /^(In|On|At|During|After|Before|By|Since|From|Following|Under|Until|Throughout|Within|Despite|Although|While|When|Because|As|If|According to) ([^,;()]{2,60}), ([^;]+?)([.!?])$/;
/** Leading words of a clause with a verb: moved to the end it keeps a comma ("X did Y, although Z"). */
const SUBORDINATORS = new Set(['Although', 'While', 'When', 'Because', 'As', 'If', 'According to']);

const lowerFirst = (text: string): string => {
  const first = text.split(' ')[0]!;
  return SENTENCE_INITIAL.has(first.toLowerCase()) ? text[0]!.toLowerCase() + text.slice(1) : text;
};
const upperFirst = (text: string): string => text[0]!.toUpperCase() + text.slice(1);

/** "In 1990, X did Y." and "X did Y in 1990.": the leading and trailing forms of one sentence, or null. */
export function clauseForms(sentence: string): { leading: string; trailing: string } | null {
  const match = LEADING.exec(sentence);
  if (!match) return null;
  const [, preposition, phrase, rest, stop] = match;
  if (rest!.split(' ').length < 4) return null;
  const joint = SUBORDINATORS.has(preposition!) ? ', ' : ' ';
  return { leading: sentence, trailing: `${upperFirst(lowerFirst(rest!))}${joint}${preposition!.toLowerCase()} ${phrase}${stop}` };
}

/** Adds an initialism or a short name in brackets after a multi-word name. */
export function addParenthetical(sentence: string, random: Random): string | null {
  const names = [...sentence.matchAll(/(?<![\p{L}\p{N}'-])\p{Lu}\p{Ll}+(?: (?:of |the )?\p{Lu}\p{Ll}+)+(?![\p{L}\p{N}'-]| \(| \p{Lu})/gu)].filter(
    (m) => !m[0].split(' ').some((word) => MONTH.test(word)),
  );
  const name = pick(random, names);
  if (!name) return null;
  const capitals = name[0].split(' ').filter((word) => /^\p{Lu}/u.test(word));
  const end = name.index + name[0].length;
  const form = Math.floor(random() * 3);
  if (form === 0) return `${sentence.slice(0, end)} (${capitals.map((word) => word[0]).join('')})${sentence.slice(end)}`;
  const alias = `also known as the ${capitals[capitals.length - 1]}`;
  // An apposition between commas only where the sentence goes on after the name (and no comma follows it already).
  if (form === 1 && /^ \p{Ll}/u.test(sentence.slice(end))) return `${sentence.slice(0, end)}, ${alias},${sentence.slice(end)}`;
  return `${sentence.slice(0, end)} (${alias})${sentence.slice(end)}`;
}

/** Where a sentence can be cut in two: a semicolon, or ", but" / ", and" between two clauses of five or more words. */
export function splitPoint(sentence: string): [string, string] | null {
  const semicolon = /^(.{25,}?); (.{25,})$/.exec(sentence);
  if (semicolon) return [`${semicolon[1]}.`, upperFirst(semicolon[2]!)];
  const conjunction = /^([^,]{25,}), (but|and) ([a-z][^,]{25,})$/.exec(sentence);
  if (conjunction && conjunction[3]!.split(' ').length >= 5) return [`${conjunction[1]}.`, `${upperFirst(conjunction[2]!)} ${conjunction[3]}`];
  return null;
}

/** Two sentences joined by a semicolon. */
export function mergeSentences(first: string, second: string): string | null {
  if (!/\.$/.test(first) || /^[^A-Za-z]/.test(second)) return null;
  return `${first.slice(0, -1)}; ${lowerFirst(second)}`;
}

interface EditContext {
  random: Random;
  /** Sentences of other articles of the same half, for inserts. */
  otherSentences: readonly string[];
  /** Names of other articles of the same half, for name swaps. */
  otherNames: readonly string[];
}

/** Applies one edit of `kind` to the unedited stretches; false when nothing in the paragraph admits it. */
function applyEdit(stretches: Stretch[], kind: EditKind, context: EditContext): boolean {
  const { random } = context;
  const untouched = stretches.map((s, i) => ({ s, i })).filter(({ s }) => s.kind === null);
  const order = shuffled(untouched, random);
  const replaceOne = (make: (sentence: string) => { old: string; new: string } | null): boolean => {
    for (const { s, i } of order) {
      const made = make(s.new[0]!);
      if (!made || made.old === made.new || !splitsAs([made.old]) || !splitsAs([made.new])) continue;
      stretches[i] = { old: [made.old], new: [made.new], kind };
      return true;
    }
    return false;
  };
  switch (kind) {
    case 'typo':
      return replaceOne((sentence) => {
        const typo = misspell(sentence, random);
        return typo ? { old: typo, new: sentence } : null;
      });
    case 'year':
      return replaceOne((sentence) => {
        const changed = swapYear(sentence, random);
        return changed ? { old: sentence, new: changed } : null;
      });
    case 'number':
      return replaceOne((sentence) => {
        const changed = swapNumber(sentence, random);
        return changed ? { old: sentence, new: changed } : null;
      });
    case 'name':
      return replaceOne((sentence) => {
        const changed = swapName(sentence, context.otherNames, random);
        return changed ? { old: sentence, new: changed } : null;
      });
    case 'reorder':
      return replaceOne((sentence) => {
        const forms = clauseForms(sentence);
        if (!forms) return null;
        return random() < 0.5 ? { old: forms.leading, new: forms.trailing } : { old: forms.trailing, new: forms.leading };
      });
    case 'parenthetical':
      return replaceOne((sentence) => {
        const added = addParenthetical(sentence, random);
        return added ? { old: sentence, new: added } : null;
      });
    case 'split':
      for (const { s, i } of order) {
        const parts = splitPoint(s.new[0]!);
        if (!parts || !splitsAs(parts)) continue;
        stretches[i] = { old: s.old, new: parts, kind };
        return true;
      }
      return false;
    case 'merge':
      for (const { s, i } of order) {
        const next = stretches[i + 1];
        if (!next || next.kind !== null) continue;
        const merged = mergeSentences(s.new[0]!, next.new[0]!);
        if (!merged || !splitsAs([merged])) continue;
        stretches.splice(i, 2, { old: [s.old[0]!, next.old[0]!], new: [merged], kind });
        return true;
      }
      return false;
    case 'insert': {
      const inserted = pick(random, context.otherSentences);
      if (!inserted) return false;
      stretches.splice(Math.floor(random() * (stretches.length + 1)), 0, { old: [], new: [inserted], kind });
      return true;
    }
  }
}

const GOLD_OF: Record<EditKind, SentenceGold> = {
  typo: 'UNCHANGED',
  merge: 'UNCHANGED',
  split: 'UNCHANGED',
  reorder: 'UNCHANGED',
  parenthetical: 'UNCHANGED',
  insert: 'NEW',
  year: 'CHANGED',
  number: 'CHANGED',
  name: 'CHANGED',
};

function seedOf(seed: number, text: string): number {
  return createHash('sha256').update(`${seed}\n${text}`).digest().readUInt32LE(0);
}

/** The old/new case of one paragraph, or null when no edit applies or the splitter would not see the intended sentences. */
export function editParagraph(paragraph: Paragraph, id: string, seed: number, pools: Omit<EditContext, 'random'>): ControlledEditCase | null {
  const random = seededRandom(seedOf(seed, paragraph.text));
  const sentences = splitSentences(paragraph.text).map((s) => s.text);
  const stretches: Stretch[] = sentences.map((text) => ({ old: [text], new: [text], kind: null }));
  const wanted = random() < 0.6 ? 1 : 2;
  const kinds: EditKind[] = [];
  for (const kind of shuffled(EDIT_KINDS, random)) {
    if (kinds.length === wanted) break;
    if (applyEdit(stretches, kind, { random, ...pools })) kinds.push(kind);
  }
  const old = stretches.flatMap((s) => s.old);
  const neu = stretches.flatMap((s) => s.new);
  if (kinds.length === 0 || !splitsAs(old) || !splitsAs(neu)) return null;
  const gold: SentenceCase['gold'] = [];
  const edits: Array<EditKind | null> = [];
  let oldIndex = 0;
  for (const stretch of stretches) {
    const label = stretch.kind ? GOLD_OF[stretch.kind] : 'UNCHANGED';
    for (let i = 0; i < stretch.new.length; i++) {
      if (stretch.old.length === 0) gold.push({ label, previous: null });
      else if (stretch.old.length > 1) gold.push({ label, previous: oldIndex, also: stretch.old.slice(1).map((_, k) => oldIndex + 1 + k) });
      else gold.push({ label, previous: oldIndex });
      edits.push(stretch.kind);
    }
    oldIndex += stretch.old.length;
  }
  return { id, source: 'controlled-edit', title: paragraph.title, old, new: neu, gold, kinds, edits };
}

/** The labeled cases of one half: one per paragraph of its articles (or of `limit` of them), in file order. */
export function controlledEditCases(paragraphs: readonly Paragraph[], split: EditSplit, options: { seed?: number; limit?: number } = {}): ControlledEditCase[] {
  const seed = options.seed ?? DEFAULT_EDIT_SEED;
  const mine = paragraphs.filter((p) => splitOfTitle(p.title) === split);
  // Inserted sentences and swapped-in names come from a fixed sample of the half, so a case does not depend on `limit`.
  const sample = mine.filter((_, i) => i % 7 === 0);
  // A stray fragment of the splitter ("[citation needed]", a pronunciation) is no sentence anyone would insert.
  const whole = (sentence: string): boolean =>
    /^\p{Lu}/u.test(sentence) && /[.!?]$/.test(sentence) && sentence.split(' ').length >= 6 && sentence.split('(').length === sentence.split(')').length;
  const sampleSentences = sample.map((p) => ({
    title: p.title,
    sentences: splitSentences(p.text)
      .map((s) => s.text)
      .filter(whole),
  }));
  // A limit takes paragraphs spread evenly over the half, so it still covers every article.
  const step = options.limit !== undefined && options.limit < mine.length ? mine.length / options.limit : 1;
  const chosen = Array.from({ length: Math.floor(mine.length / step) }, (_, k) => Math.floor(k * step));
  const cases: ControlledEditCase[] = [];
  for (const i of chosen) {
    const paragraph = mine[i]!;
    const others = sampleSentences.filter((p) => p.title !== paragraph.title);
    const otherSentences = others.flatMap((p) => p.sentences);
    const made = editParagraph(paragraph, `${split}-${i}`, seed, {
      otherSentences,
      otherNames: [...new Set(otherSentences.flatMap((s) => capitalizedRuns(s).map((run) => run.text)))],
    });
    if (made) cases.push(made);
  }
  return cases;
}

export interface ControlledEditReport extends LabelingReport {
  sentencesPerSecond: number;
  /** Typo fixes labeled CHANGED, of all typo fixes. */
  typoFixesChanged: { count: number; of: number; share: number };
  /** Inserted sentences not labeled NEW, of all inserted sentences. */
  insertsNotNew: { count: number; of: number; share: number };
  /** Cases (article versions) with an old sentence labeled DELETED that nothing deleted. */
  spuriousDeletions: { cases: number; of: number; articles: number; ofArticles: number };
  /** Edit kind → predicted label → new sentences. */
  byKind: Record<EditKind, Record<SentenceGold, number>>;
}

const round = (x: number): number => Number(x.toFixed(3));

export async function evaluateControlledEdits(labeler: SentenceLabeler, cases: readonly ControlledEditCase[]): Promise<ControlledEditReport> {
  const byKind = Object.fromEntries(EDIT_KINDS.map((kind) => [kind, { UNCHANGED: 0, CHANGED: 0, NEW: 0 }])) as ControlledEditReport['byKind'];
  const spuriousCases = new Set<string>();
  const spuriousArticles = new Set<string>();
  const report = await evaluateLabeler(labeler, cases, (c, predicted, deletedIds) => {
    const edited = c as ControlledEditCase;
    predicted.forEach((label, i) => {
      const kind = edited.edits[i];
      if (kind) byKind[kind][label]++;
    });
    const succeeded = new Set(c.gold.flatMap((g) => (g.previous === null ? [] : [g.previous, ...(g.also ?? [])])));
    if (deletedIds.some((i) => succeeded.has(i))) {
      spuriousCases.add(c.id);
      spuriousArticles.add(edited.title);
    }
  });
  const total = (kind: EditKind): number => byKind[kind].UNCHANGED + byKind[kind].CHANGED + byKind[kind].NEW;
  const typos = total('typo');
  const inserts = total('insert');
  return {
    ...report,
    sentencesPerSecond: report.seconds === 0 ? 0 : Math.round(report.pairs / report.seconds),
    typoFixesChanged: { count: byKind.typo.CHANGED, of: typos, share: round(typos === 0 ? 0 : byKind.typo.CHANGED / typos) },
    insertsNotNew: { count: inserts - byKind.insert.NEW, of: inserts, share: round(inserts === 0 ? 0 : (inserts - byKind.insert.NEW) / inserts) },
    spuriousDeletions: { cases: spuriousCases.size, of: cases.length, articles: spuriousArticles.size, ofArticles: new Set(cases.map((c) => c.title)).size },
    byKind,
  };
}

/** How many cases have each edit kind. */
export function kindCounts(cases: readonly ControlledEditCase[]): Record<EditKind, number> {
  const counts = Object.fromEntries(EDIT_KINDS.map((kind) => [kind, 0])) as Record<EditKind, number>;
  for (const c of cases) for (const kind of c.kinds) counts[kind]++;
  return counts;
}
