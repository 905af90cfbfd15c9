/**
 * An acronym names exactly the words it stands for: "CEO" is the chief executive officer and
 * not the chief financial officer, however close the two sit in an encoder's space (issue 32:
 * "Who is Boeing's chief financial officer?" was answered with the CEO at full confidence). A
 * question and an attribute each give role keys, their acronyms and the initials of their spelled
 * runs; keys of one shape (same length, same first and last letter) that differ name two roles.
 * Two roles of one head differ by the word before it: the foreign minister is not the finance
 * minister ("Who is Germany's foreign minister?" was answered with the finance minister, adopted
 * at 0.95), though both are "FM".
 */

import { contentTerms } from '../text/language.js';
import type { FactRecord } from '../domain/model.js';
import { isTypoOf, type LinkedSubject } from './subjects.js';

/** How an attribute stands to the role a question names. */
export type RoleAgreement = 'names' | 'contradicts' | 'silent';

const ACRONYM = /^\p{Lu}{2,6}$/u;
/** Words an acronym skips ("Chair of the Board" is CB). */
const FILLER = new Set(['of', 'the', 'and', 'for', 'a', 'an']);

const wordsOf = (text: string): string[] => text.match(/[\p{L}\p{N}]+/gu) ?? [];
const initials = (words: readonly string[]): string =>
  words
    .filter((word) => !FILLER.has(word.toLowerCase()))
    .map((word) => word[0]!.toLowerCase())
    .join('');

/** How a question may name an attribute as one name: its words ("cto") or their initials ("vp" for Vice President), lower case. */
export function attributeNames(attribute: string): string[] {
  const words = wordsOf(attribute);
  const spelled = initials(words);
  return words.length >= 2 && spelled.length >= 2 ? [words.join(' ').toLowerCase(), spelled] : [words.join(' ').toLowerCase()];
}

/**
 * Whether a name the question uses is an attribute of a subject it names ("OpenAI's CTO",
 * "Argentina's VP"): the store knows it from the facts, though no text may write it.
 */
export function namesAnAttribute(name: string, linked: readonly LinkedSubject[], versions: ReadonlyMap<string, readonly FactRecord[]>): boolean {
  return linked.some((subject) => (versions.get(subject.articleId) ?? []).some((fact) => attributeNames(fact.attribute).includes(name)));
}

/** The attribute's key: its letters when it is an acronym ("CEO"), the initials of a role of three or more words. */
function attributeKey(attribute: string): string | null {
  const words = wordsOf(attribute);
  if (words.length === 1 && ACRONYM.test(words[0]!)) return words[0]!.toLowerCase();
  const spelled = initials(words);
  return spelled.length >= 3 ? spelled : null;
}

/**
 * A question word that may be a role's acronym: in capitals, or in lower case as people type
 * ("boeing's cfo") when it has the key's shape and is no stop word.
 */
function isWrittenAcronym(word: string, key: string): boolean {
  if (ACRONYM.test(word)) return true;
  return word.length >= 3 && word === word.toLowerCase() && sameShape(word, key) && contentTerms(word).size > 0;
}

const sameShape = (a: string, b: string): boolean => a.length === b.length && a[0] === b[0] && a.at(-1) === b.at(-1);

/**
 * Whether the question names the attribute's role by acronym or spelled out ("names"), names
 * another role of the same shape instead ("contradicts": CFO, or "chief financial officer", for
 * CEO), or says nothing either way. Acronyms in the subject's title ("FIFA") name the subject.
 * Where acronyms say nothing, the word before the role's head decides (modifierAgreement).
 */
export function roleAgreement(question: string, attribute: string, subject: Pick<LinkedSubject, 'title' | 'words'>): RoleAgreement {
  const byAcronym = acronymAgreement(question, attribute, subject.title);
  if (byAcronym !== 'silent') return byAcronym;
  const byModifier = modifierAgreement(question, attribute, subject);
  return byModifier === 'silent' ? chiefAgreement(question, attribute, subject.title) : byModifier;
}

/**
 * A "chief" office the question names ("chief executive", "chief economist") is that office: an
 * attribute names it by both words or by an acronym of them (CEO), and any other attribute ("Manager")
 * is another role ("Who is Manchester United's chief executive?" was answered with the manager). A
 * title with "Chief" in it is named by the question's chief, not asked about.
 */
function chiefAgreement(question: string, attribute: string, title: string): RoleAgreement {
  const words = wordsOf(question).map((word) => word.toLowerCase());
  const office = words.findIndex((word, at) => word === 'chief' && at + 1 < words.length && !FILLER.has(words[at + 1]!));
  // "the Chief Minister of Punjab" names the subject, not an attribute of it.
  if (office < 0 || wordsOf(title).some((word) => word.toLowerCase() === 'chief')) return 'silent';
  const kind = words[office + 1]!;
  const role = wordsOf(attribute).map((word) => word.toLowerCase());
  const named = (role.includes('chief') && role.includes(kind)) || (attributeKey(attribute) ?? '').startsWith(`c${kind[0]}`);
  return named ? 'names' : 'contradicts';
}

function acronymAgreement(question: string, attribute: string, title: string): RoleAgreement {
  const key = attributeKey(attribute);
  if (key === null) return 'silent';
  const titleWords = new Set(wordsOf(title));
  const words = wordsOf(question);
  const keys = words.filter((word) => isWrittenAcronym(word, key) && !titleWords.has(word)).map((word) => word.toLowerCase());
  for (let start = 0; start < words.length; start++) {
    const run = spelledRun(words, start, key.length, titleWords);
    if (run) keys.push(run);
  }
  const shaped = keys.filter((candidate) => sameShape(candidate, key));
  if (shaped.includes(key)) return 'names';
  return shaped.length > 0 ? 'contradicts' : 'silent';
}

/**
 * Words before a role's head that say when or how it is held, not which role it is ("the new
 * manager", "the reigning champion"), and the possessive's "s" ("Bayern's coach").
 */
const NOT_A_ROLE = new Set(
  's current new former present acting interim caretaker next last first previous incumbent outgoing incoming sitting reigning defending latest then future late ex newly'.split(
    ' ',
  ),
);

/**
 * For an attribute of two or three words with no filler ("Finance Minister", "Head coach"): where
 * the question says its last word, whether it names that role ("names": "finance minister",
 * "minister of finance"), another of the same head ("contradicts": "foreign minister", "assistant
 * coach"), or says nothing (no word before the head but a stop word, a word naming the subject
 * as the title or the question does, or a word of how the role is held). Words one typo off count
 * as written ("global helath emergency").
 * Two words before the head that disagree ("deputy prime minister" for Prime minister, "funds
 * target rate" for Federal funds rate) say nothing either: a longer role may or may not be this one.
 */
function modifierAgreement(question: string, attribute: string, subject: Pick<LinkedSubject, 'title' | 'words'>): RoleAgreement {
  const role = wordsOf(attribute).map((word) => word.toLowerCase());
  if (role.length < 2 || role.length > 3 || role.some((word) => FILLER.has(word))) return 'silent';
  const head = role.at(-1)!;
  // "Current emergency" names no kind of emergency: any will do.
  if (role.slice(0, -1).every((word) => NOT_A_ROLE.has(word))) return 'silent';
  // The subject as its title writes it, or as the question named it ("German" for Germany, a typo, a short form).
  const subjectWords = new Set([...wordsOf(subject.title).map((word) => word.toLowerCase()), ...subject.words]);
  const words = wordsOf(question).map((word) => word.toLowerCase());
  const near = (word: string, own: string): boolean => word === own || isTypoOf(word, own);
  const inRole = (word: string | undefined): boolean => word !== undefined && role.some((own) => near(word, own));
  // A word that says nothing of which role: a stop word, a word naming the subject, how the role is held.
  const saysNothing = (word: string): boolean => subjectWords.has(word) || [...NOT_A_ROLE].some((held) => near(word, held)) || contentTerms(word).size === 0;
  let agreement: RoleAgreement = 'silent';
  for (const [at, word] of words.entries()) {
    if (word !== head) continue;
    const [before, twoBack] = [words[at - 1], words[at - 2]];
    const after = FILLER.has(words[at + 1] ?? '') ? words.slice(at + 2, at + 4) : [];
    if (after.some((next) => inRole(next))) return 'names';
    if (before === undefined || saysNothing(before)) continue;
    const modified = twoBack !== undefined && !saysNothing(twoBack);
    if (inRole(before)) {
      if (!modified || inRole(twoBack)) return 'names';
    } else if (!(modified && inRole(twoBack))) agreement = 'contradicts';
  }
  return agreement;
}

/** The initials of `length` words from `start` on, filler skipped inside; none across a word of the title. */
function spelledRun(words: readonly string[], start: number, length: number, titleWords: ReadonlySet<string>): string | null {
  if (FILLER.has(words[start]!.toLowerCase())) return null;
  let letters = '';
  for (let at = start; at < words.length && letters.length < length; at++) {
    const word = words[at]!;
    if (titleWords.has(word)) return null;
    if (!FILLER.has(word.toLowerCase())) letters += word[0]!.toLowerCase();
  }
  return letters.length === length ? letters : null;
}
