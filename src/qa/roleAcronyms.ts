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
import { isTypoOf } from './subjects.js';

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

/** The attribute's key: its letters when it is an acronym ("CEO"), the initials of a role of three or more words. */
function attributeKey(attribute: string): string | null {
  const words = wordsOf(attribute);
  if (words.length === 1 && ACRONYM.test(words[0]!)) return words[0]!.toLowerCase();
  const spelled = initials(words);
  return spelled.length >= 3 ? spelled : null;
}

const sameShape = (a: string, b: string): boolean => a.length === b.length && a[0] === b[0] && a.at(-1) === b.at(-1);

/**
 * Whether the question names the attribute's role by acronym or spelled out ("names"), names
 * another role of the same shape instead ("contradicts": CFO, or "chief financial officer", for
 * CEO), or says nothing either way. Acronyms in the subject's title ("FIFA") name the subject.
 */
export function roleAgreement(question: string, attribute: string, title: string): RoleAgreement {
  const byAcronym = acronymAgreement(question, attribute, title);
  return byAcronym === 'silent' ? modifierAgreement(question, attribute, title) : byAcronym;
}

function acronymAgreement(question: string, attribute: string, title: string): RoleAgreement {
  const key = attributeKey(attribute);
  if (key === null) return 'silent';
  const titleWords = new Set(wordsOf(title));
  const words = wordsOf(question);
  const keys = words.filter((word) => ACRONYM.test(word) && !titleWords.has(word)).map((word) => word.toLowerCase());
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
 * manager", "the acting president"), and the possessive's "s" ("Bayern's coach").
 */
const NOT_A_ROLE = new Set(
  's current new former present acting interim next last first previous incumbent outgoing incoming sitting latest then future late'.split(' '),
);

/**
 * For an attribute of two or three words with no filler ("Finance Minister", "Head coach"): where
 * the question says its last word, whether the word before it is one of the attribute's ("names"),
 * another ("contradicts": "foreign minister"), or says nothing (a stop word, the title, "new"). A
 * misspelt one ("global helath emergency") is the attribute's.
 */
function modifierAgreement(question: string, attribute: string, title: string): RoleAgreement {
  const role = wordsOf(attribute).map((word) => word.toLowerCase());
  if (role.length < 2 || role.length > 3 || role.some((word) => FILLER.has(word))) return 'silent';
  const head = role.at(-1)!;
  // "Current emergency" names no kind of emergency: any will do.
  if (role.slice(0, -1).every((word) => NOT_A_ROLE.has(word))) return 'silent';
  const titleWords = new Set(wordsOf(title).map((word) => word.toLowerCase()));
  const words = wordsOf(question).map((word) => word.toLowerCase());
  let agreement: RoleAgreement = 'silent';
  for (const [at, word] of words.entries()) {
    const before = words[at - 1];
    if (word !== head || before === undefined || NOT_A_ROLE.has(before) || titleWords.has(before) || contentTerms(before).size === 0) continue;
    if (role.some((own) => own === before || isTypoOf(before, own))) return 'names';
    agreement = 'contradicts';
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
