/**
 * Links a question to the articles it names, also where it names them differently from their
 * titles: a word may be the start of a title word ("Man" Manchester, "champion" Championship),
 * an abbreviation of one ("Utd" United), one typo away from one ("madird" Madrid), an acronym
 * for several ("US" United States, "WHO" World Health Organization, "BoE" Bank of England), or a
 * demonym for a country's name ("Dutch" Netherlands). A title is linked by the share of its own
 * content words the question covers, in any order.
 */
import { countryNamesOf } from '../text/countries.js';
import { contentTerms } from '../text/language.js';
import { nameWords, normalizeAnswer, withoutMarks } from '../text/normalize.js';

export interface LinkedSubject {
  articleId: string;
  title: string;
  /** Share of the title's content words the question names (1: all of them). */
  coverage: number;
  /** The question's words that name it, lower case. */
  words: string[];
}

/** Words a title carries that say nothing of which article it is ("F.C.", "the", "of"). */
const TITLE_FILLER = new Set(['of', 'the', 'and', 'in', 'for', 'on', 'at', 'to', 'de', 'f', 'c', 'fc', 'cf', 'inc', 'ltd', 'plc', 'co']);
/** A title is linked when the question names at least this share of its content words. */
export const MIN_TITLE_COVERAGE = 0.5;
const MAX_SKIPPED_QUESTION_WORDS = 1;

interface Title {
  articleId: string;
  title: string;
  words: string[];
  /** Whether each word counts toward coverage: not filler, and not in a disambiguating "(…)". */
  content: boolean[];
  contentCount: number;
}

interface QuestionWord {
  /** As written, lower case (what LinkedSubject.words and respell use). */
  said: string;
  /** Lower case, diacritics removed: what is compared with title words. */
  lower: string;
  /** A function word ("for", "and"), a number or a month ("Sep"): it names a title word only when it is that word. */
  exactOnly: boolean;
  /** Starts with a capital: a name, which may be abbreviated ("Utd"). */
  capitalised: boolean;
  /**
   * The letters of a possible acronym: a word written in capitals ("US", "WHO"), or the capitals of a
   * short one in mixed case, whose small letters stand for function words ("BoE": Bank of England).
   */
  acronym: string | null;
  /** Mixed case like "BoE": it names title words only as an acronym, not as the start of "Boeing". */
  acronymOnly: boolean;
  /**
   * The names of the country a capitalised demonym names ("the Dutch prime minister": Netherlands),
   * or null; also null inside a name, before a capitalised word ("Indian Ocean", "French Alps").
   */
  country: string[][] | null;
}

/** A word of a question typed in lower case may be an acronym up to this length ("ecb", "fifa"). */
const MAX_LOWER_ACRONYM = 4;
/** A word in mixed case of at most this many letters may be an acronym ("BoE", "DoJ"); "McDonald" is a name. */
const MAX_MIXED_ACRONYM = 4;

const MONTHS = /^(?:jan|january|feb|february|mar|march|apr|april|may|jun|june|jul|july|aug|august|sep|sept|september|oct|october|nov|november|dec|december)$/;

function questionWords(text: string): QuestionWord[] {
  const words = text.normalize('NFKC').match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? [];
  // A capitalised word after a demonym makes it part of a name; an acronym after it does not ("the Dutch PM").
  const inName = (next: string | undefined): boolean => next !== undefined && /^\p{Lu}/u.test(next) && next !== next.toUpperCase();
  // Typed all in lower case ("who's the ecb's vp", "dutch pm"), a question says nothing by its
  // capitals: any word but a function word or a month may be a name, an acronym or a demonym.
  const typedLower = text === text.toLowerCase();
  return words.map((word, index) => {
    const said = normalizeAnswer(word.replace(/['’]s$/u, ''));
    const lower = withoutMarks(said);
    const mayBeName = typedLower && contentTerms(said).size > 0 && !MONTHS.test(lower);
    const capitals = (word.length >= 2 && word === word.toUpperCase() && /\p{Lu}/u.test(word)) || (mayBeName && word.length <= MAX_LOWER_ACRONYM);
    const capitalised = /^\p{Lu}/u.test(word) || mayBeName;
    const capitalLetters = word.match(/\p{Lu}/gu) ?? [];
    const acronymOnly = !capitals && capitalLetters.length >= 2 && word.length <= MAX_MIXED_ACRONYM && capitalised;
    return {
      said,
      lower,
      exactOnly: !capitals && !acronymOnly && (contentTerms(word).size === 0 || MONTHS.test(lower)),
      capitalised,
      acronym: capitals ? lower : acronymOnly ? withoutMarks(capitalLetters.join('').toLowerCase()) : null,
      acronymOnly,
      country: capitalised && !inName(words[index + 1]) ? countryNamesOf(said) : null,
    };
  });
}

/**
 * A contraction of `word`: its first and last letters with some of those between, in order, at
 * most half as long ("utd" United, "govt" Government, "natl" National). "Sep" is no Simferopol,
 * nor "Force" Florence.
 */
function abbreviates(short: string, word: string): boolean {
  if (short.length < 2 || 2 * short.length > word.length || short[0] !== word[0] || short.at(-1) !== word.at(-1)) return false;
  let at = 1;
  for (let i = 1; i < short.length - 1; i++) {
    at = word.indexOf(short[i]!, at) + 1;
    if (at === 0) return false;
  }
  return true;
}

/** What a question word may add to a title word and still name it: a plural or a demonym's ending ("Australian"), not "Paula" for Paul. */
const INFLECTION = /^(?:s|es|n|an|ian|ns|ans|ians)$/;

/**
 * One typo apart: a letter changed, added or left out, or two neighbours swapped ("madird"
 * Madrid, "liverpol" Liverpool).
 */
function oneTypoApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length !== b.length) return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
  return a.slice(i + 1) === b.slice(i + 1) || (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2));
}

/** Words shorter than this are not matched across a typo: "mail" and "mali" are both words. */
const MIN_TYPO_WORD = 5;

/** A misspelling of `word`, not a short form of it ("Mar" is March, not a typo of "Mary"). */
export function isTypoOf(written: string, word: string): boolean {
  return written.length >= MIN_TYPO_WORD && !word.startsWith(written) && !written.startsWith(word) && oneTypoApart(written, word);
}

/** How many title words (from `at`) one question word stands for: 0 when it names none of them. */
function wordsNamed(question: QuestionWord, title: Title, at: number, acrossTypos: boolean): number {
  const word = title.words[at]!;
  const q = question.lower;
  const country = question.country?.find((name) => name.every((countryWord, i) => title.words[at + i] === countryWord));
  if (country) return country.length;
  if (q === word) return 1;
  if (question.exactOnly) return 0;
  if (question.acronymOnly) return acronymOf(question.acronym!, title, at);
  if (q.length >= 3 && (word.startsWith(q) || (word.length >= 4 && q.startsWith(word) && INFLECTION.test(q.slice(word.length))))) return 1;
  if (question.capitalised && q.length >= 3 && q.length <= 5 && abbreviates(q, word)) return 1;
  if (acrossTypos && q.length >= MIN_TYPO_WORD && word.length >= MIN_TYPO_WORD && oneTypoApart(q, word)) return 1;
  if (question.acronym !== null && q.length >= 2) return acronymOf(question.acronym, title, at);
  return 0;
}

/** How many title words (from `at`) an acronym's letters stand for, each the first letter of the next content word ("us": United States); 0 when they do not. */
function acronymOf(letters: string, title: Title, at: number): number {
  let i = at;
  for (const letter of letters) {
    while (i < title.words.length && !title.content[i]) i++;
    if (i >= title.words.length || title.words[i]![0] !== letter) return 0;
    i++;
  }
  return i - at;
}

/**
 * Keys under which a title is found by the question words that may name one of its content words
 * (wordsNamed): the word itself, its first three letters (a start or an inflection of it), its
 * first and last letters (a contraction), the word and each of it less one letter (a question word
 * one typo away shares one of these with it: the symmetric-deletion trick), and the initials of
 * each run of content words (an acronym). A country's name is found by its words as said.
 */
function titleKeys(title: Title): Set<string> {
  const keys = new Set<string>();
  const content = title.words.filter((_, i) => title.content[i]);
  content.forEach((word, at) => {
    keys.add(`=${word}`);
    if (word.length >= 3) keys.add(`^${word.slice(0, 3)}`);
    keys.add(`~${word[0]}${word.at(-1)}`);
    if (word.length >= MIN_TYPO_WORD) for (const variant of [word, ...oneLetterLess(word)]) keys.add(`?${variant}`);
    let initials = word[0]!;
    for (const next of content.slice(at + 1)) keys.add(`#${(initials += next[0])}`);
  });
  return keys;
}

/** The keys of titleKeys a question word looks under: those of the title words it may name. */
function questionKeys(word: QuestionWord, acrossTypos: boolean): string[] {
  const q = word.lower;
  const keys = [`=${q}`, ...(word.country ?? []).flatMap((name) => name.map((countryWord) => `=${countryWord}`))];
  if (word.exactOnly) return keys;
  if (word.acronym !== null && word.acronym.length >= 2) keys.push(`#${word.acronym}`);
  if (word.acronymOnly) return keys;
  if (q.length >= 3) keys.push(`^${q.slice(0, 3)}`);
  if (word.capitalised && q.length >= 3 && q.length <= 5) keys.push(`~${q[0]}${q.at(-1)}`);
  if (acrossTypos && q.length >= MIN_TYPO_WORD) for (const variant of [q, ...oneLetterLess(q)]) keys.push(`?${variant}`);
  return keys;
}

function oneLetterLess(word: string): string[] {
  return Array.from(word, (_, i) => word.slice(0, i) + word.slice(i + 1));
}

/** A question word that names a title word only across a typo, and that title word. */
interface Respelling {
  written: string;
  title: string;
}

interface Alignment {
  coverage: number;
  words: string[];
  respellings: Respelling[];
}

export class SubjectIndex {
  private readonly titles: Title[] = [];
  private readonly byId = new Map<string, Title>();
  private readonly titleWords = new Set<string>();
  /** The titles (positions in `titles`) under each key a content word of theirs gives (titleKeys). */
  private readonly titlesByKey = new Map<string, number[]>();

  constructor(articles: ReadonlyArray<{ id: string; title: string }>) {
    for (const article of articles) {
      // "Wheel of Fortune (American game show)": the words in brackets tell the page from another of
      // the same name; a question names the page by the words before them.
      const [named = '', qualifier = ''] = article.title.split(/\s*\((?=[^()]*\)\s*$)/);
      const namedWords = nameWords(named);
      const words = [...namedWords, ...nameWords(qualifier)];
      // A name of filler alone ("C (programming language)") is named by its brackets after all.
      const counted = namedWords.some((word) => !TITLE_FILLER.has(word)) ? namedWords.length : words.length;
      const content = words.map((word, i) => i < counted && !TITLE_FILLER.has(word));
      const contentCount = content.filter(Boolean).length;
      const title = { articleId: article.id, title: article.title, words, content, contentCount };
      this.byId.set(article.id, title);
      for (const word of words) this.titleWords.add(word);
      if (contentCount > 0) {
        for (const key of titleKeys(title)) {
          const titles = this.titlesByKey.get(key);
          if (titles === undefined) this.titlesByKey.set(key, [this.titles.length]);
          else if (titles.at(-1) !== this.titles.length) titles.push(this.titles.length);
        }
        this.titles.push(title);
      }
    }
  }

  /** An article as a subject the question does not name (coverage 0), e.g. one retrieval found. */
  unnamed(articleId: string): LinkedSubject | null {
    const title = this.byId.get(articleId);
    return title ? { articleId, title: title.title, coverage: 0, words: [] } : null;
  }

  /**
   * The articles the text names, best covered first. Without `acrossTypos`, a word names a title
   * word only as written: for text whose typos were respelled already, where a word one letter from
   * a title's is another word ("games", not James).
   */
  link(text: string, { acrossTypos = true }: { acrossTypos?: boolean } = {}): LinkedSubject[] {
    return this.aligned(text, acrossTypos)
      .map(({ title, alignment }) => ({ articleId: title.articleId, title: title.title, coverage: alignment.coverage, words: alignment.words }))
      .sort((a, b) => b.coverage - a.coverage || b.words.length - a.words.length || a.title.localeCompare(b.title));
  }

  /**
   * The words of the text that name a linked title only across a typo and are no title's word
   * themselves, each with the title word it misspells ("madird" → "madrid"); where two titles offer
   * different words, the better-covered one decides ("Michal Krasenkow" names Michał, not the
   * Michel of a title it names by half), and a tie offers none.
   */
  typos(text: string): Map<string, string> {
    const best = new Map<string, { title: string | null; coverage: number }>();
    for (const { alignment } of this.aligned(text, true)) {
      for (const { written, title } of alignment.respellings) {
        const seen = best.get(written);
        if (!seen || alignment.coverage > seen.coverage) best.set(written, { title, coverage: alignment.coverage });
        else if (alignment.coverage === seen.coverage && seen.title !== title) seen.title = null;
      }
    }
    return new Map([...best].flatMap(([written, { title }]) => (title === null ? [] : [[written, title] as const])));
  }

  private aligned(text: string, acrossTypos: boolean): Array<{ title: Title; alignment: Alignment }> {
    const words = questionWords(text);
    return this.candidates(words, acrossTypos).flatMap((title) => {
      const alignment = this.bestAlignment(words, title, acrossTypos);
      return alignment.coverage >= MIN_TITLE_COVERAGE ? [{ title, alignment }] : [];
    });
  }

  /**
   * The titles a question word may name a content word of, in index order: a title is linked only
   * when one is named, and aligning every title costs a store of 25,000 articles some 20 ms a question.
   */
  private candidates(words: readonly QuestionWord[], acrossTypos: boolean): Title[] {
    const positions = new Set<number>();
    for (const word of words) {
      for (const key of questionKeys(word, acrossTypos)) for (const position of this.titlesByKey.get(key) ?? []) positions.add(position);
    }
    return [...positions].sort((a, b) => a - b).map((position) => this.titles[position]!);
  }

  /**
   * The question window that names most of the title: each question word matched to the first
   * title word it names that no other has named, in any order (title words may be left out; at
   * most one unmatched question word between two matches).
   */
  private bestAlignment(words: readonly QuestionWord[], title: Title, acrossTypos: boolean): Alignment {
    let best: Alignment = { coverage: 0, words: [], respellings: [] };
    for (let start = 0; start < words.length; start++) {
      // Title words are named in any order ("the UK prime minister", "Prime Minister of the United Kingdom"), each once.
      const taken = title.words.map(() => false);
      let covered = 0;
      let skipped = 0;
      const used: string[] = [];
      const respellings: Respelling[] = [];
      for (let q = start; q < words.length; q++) {
        let matched = false;
        for (let t = 0; t < title.words.length; t++) {
          if (taken[t]) continue;
          const named = wordsNamed(words[q]!, title, t, acrossTypos);
          if (named === 0 || taken.slice(t, t + named).some(Boolean)) continue;
          for (let k = t; k < t + named; k++) {
            if (title.content[k]) covered++;
            taken[k] = true;
          }
          const { said, lower } = words[q]!;
          used.push(said);
          if (isTypoOf(lower, title.words[t]!) && !this.titleWords.has(lower)) respellings.push({ written: said, title: title.words[t]! });
          matched = true;
          break;
        }
        if (matched) skipped = 0;
        else if (used.length === 0 || ++skipped > MAX_SKIPPED_QUESTION_WORDS) break;
      }
      const coverage = covered / title.contentCount;
      if (coverage > best.coverage) best = { coverage, words: used, respellings };
    }
    return best;
  }
}

/** The text with each of `typos`' words written as the title does ("who manages real madird?" → "who manages real madrid?"). */
export function respell(text: string, typos: ReadonlyMap<string, string>): string {
  if (typos.size === 0) return text;
  return text.replace(/[\p{L}\p{N}]+/gu, (word) => {
    const title = typos.get(normalizeAnswer(word));
    if (title === undefined) return word;
    return /^\p{Lu}/u.test(word) ? title[0]!.toUpperCase() + title.slice(1) : title;
  });
}

/**
 * The parts of a question's names (questionNames, split at "of", "the" …) that join a word of a
 * linked title to a word no linked subject has: "Real Sociedad" beside Real Madrid CF, "European
 * Commission" beside President of the European Council. Such a part names another thing, unless
 * the store's text uses it ("Winter Games" for the 2030 Winter Olympics), which the caller asks. A
 * demonym is no title's word ("Cambodian Senate"), nor is a club's "FC".
 */
export function namesBesideTitles(names: readonly string[], linked: readonly LinkedSubject[]): string[] {
  const titleWords = [...new Set(linked.flatMap((subject) => nameWords(subject.title)))].filter((word) => !TITLE_FILLER.has(word));
  // "Champions" is a word of "Championships", "Cup" of "Cups"; "Cambodian" is none of Cambodia's.
  const ofTitles = (word: string): boolean =>
    titleWords.includes(word) || (countryNamesOf(word) === null && titleWords.some((title) => title.startsWith(word) || word.startsWith(title)));
  // What linking read as a title's word: "Utd" is United's.
  const named = new Set(linked.flatMap((subject) => subject.words));
  const parts = names.flatMap((name) => name.split(/\s+(?:(?:of|the|and|de)\s+)+/));
  return parts.filter((part) => {
    const words = part.split(' ');
    const other = (word: string): boolean => !ofTitles(word) && !named.has(word) && !TITLE_FILLER.has(word) && contentTerms(word).size > 0;
    return words.some(ofTitles) && words.some(other);
  });
}

/** Words after an office's head that leave it the head: "President-elect", "Director-General", "Governor General". */
const AFTER_HEAD = new Set(['elect', 'designate', 'general']);
/** Words that end a name without being its head: "Opened by", "Named after". */
const NO_HEAD = new Set(['by', 'after', 'for', 'from', 'to', 'in', 'on', 'at', 'with']);

/**
 * The heads of attribute names, which say a role ("president" of "FIFA President"); their
 * modifiers may name anything ("Bank Rate"). The head of "Party of the prime minister" is "party".
 */
export function roleWordsOf(attributeNames: readonly string[]): Set<string> {
  const heads = attributeNames.map((name) => {
    const words = normalizeAnswer(name).split(/ of /)[0]!.split(' ').filter(Boolean);
    while (words.length > 1 && AFTER_HEAD.has(words.at(-1)!)) words.pop();
    return words.at(-1);
  });
  return new Set(heads.filter((head): head is string => head !== undefined && !NO_HEAD.has(head)));
}

/**
 * The linked subjects a question names by more than a role: a title named only by role words
 * (roleWordsOf the store's attribute names: "President of Argentina" by "president" in "who's the
 * uefa president?") is whichever thing has that role, not this one, unless the question names the
 * whole title. A question word counts as the role only where the title holds it as written: "Champion
 * League" names "UEFA Champions League" by more than the role "Champion".
 */
export function namedBeyondRoles(linked: readonly LinkedSubject[], roleWords: ReadonlySet<string>): LinkedSubject[] {
  return linked.filter((subject) => {
    if (subject.coverage >= 1) return true;
    const titleWords = new Set(nameWords(subject.title));
    return !subject.words.every((word) => TITLE_FILLER.has(word) || (roleWords.has(word) && titleWords.has(word)));
  });
}
