/**
 * DynaQuest's false changes: an infobox edit that leaves the fact as it was. A value is first
 * normalised (wiki markup and references stripped, Unicode NFKC, one space); two values that
 * then differ are still the same fact when the edit only fixes a typo, adds or drops
 * diacritics, abbreviates or expands a name ("United States" ↔ "U.S."), or adds, drops or
 * rewrites a qualifier after the same head ("Frankfurt" → "Frankfurt, Germany"). List values
 * (three or more members, or two joined by "and") are compared as sets of members.
 */
import { folded, withoutMarks } from '../text/normalize.js';

export type FalseChangeKind = 'TYPO' | 'DIACRITICS' | 'ABBREVIATION' | 'QUALIFIER' | 'FORMAT';

export type ValueEdit =
  | { kind: 'SAME' }
  | { kind: 'REFINED'; reason: FalseChangeKind }
  /** For list values, the members added and removed (empty for a single value). */
  | { kind: 'UPDATED'; added: string[]; removed: string[] };

/** Strips wiki markup and references, composes Unicode (NFKC) and collapses whitespace. */
export function normalizeFactValue(value: string): string {
  return value
    .normalize('NFKC')
    .replace(/<ref[^>]*\/>/gi, '')
    .replace(/<ref[^>]*>[\s\S]*?<\/ref>/gi, '')
    .replace(/<[^>]+>/g, '')
    .replace(/\{\{[^{}]*\}\}/g, '')
    .replace(/\[\[(?:[^\]|]*\|)?([^\]]*)\]\]/g, '$1')
    .replace(/\[\d+\]|\[citation needed\]/gi, '')
    .replace(/'{2,}/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

const digits = (value: string): string => value.replace(/\D+/g, ' ').trim();

/**
 * A small edit relative to the length that leaves every number as it was ("Virgina" →
 * "Virginia"), inside words of five letters or more: in a short word one letter makes another
 * name ("Mark" → "Mary", "John" → "Jon").
 */
function isTypoFix(a: string, b: string): boolean {
  if (digits(a) !== digits(b)) return false;
  const x = folded(a);
  const y = folded(b);
  const distance = editDistance(x, y);
  if (distance > Math.min(2, Math.floor(Math.max(x.length, y.length) / 8))) return false;
  const left = x.split(' ');
  const right = y.split(' ');
  if (left.length !== right.length) return false;
  return left.every((word, i) => word === right[i] || Math.min(word.length, right[i]!.length) >= 5);
}

const words = (value: string): string[] => value.split(/\s+/).filter(Boolean);
const initial = (word: string): string => folded(word).charAt(0);
const STOP_IN_NAMES = new Set(['of', 'the', 'and', 'for', 'de', 'la']);

/** "U.S." / "US" / "UK" as letters, when the word is an initialism (or a dotted abbreviation). */
function initialismLetters(word: string): string | null {
  const stripped = word.replace(/\./g, '');
  if (/^\p{Lu}{2,6}$/u.test(stripped) || /^(\p{L}\.){2,}$/u.test(word)) return stripped.toLowerCase();
  return null;
}

/** A dotted short form of one word: its beginning ("Univ." for University) or its first and last letters ("St." for Saint). */
function contracts(short: string, word: string): boolean {
  if (!short.endsWith('.')) return false;
  const letters = folded(short);
  const full = folded(word);
  if (letters.length < 2 || letters.length >= full.length) return false;
  return full.startsWith(letters) || (letters[0] === full[0] && letters.at(-1) === full.at(-1) && letters.length <= 3);
}

/** Whether `short` is `long` with runs of words replaced by their initialism ("Canada, U.S." ↔ "Canada, United States"). */
function abbreviates(short: string[], long: string[]): boolean {
  const matchFrom = (s: number, l: number): boolean => {
    if (s === short.length) return l === long.length;
    if (l === long.length) return false;
    if (folded(short[s]!) === folded(long[l]!) && folded(short[s]!) !== '') return matchFrom(s + 1, l + 1);
    if (contracts(short[s]!, long[l]!)) return matchFrom(s + 1, l + 1);
    const letters = initialismLetters(short[s]!.replace(/[,;]$/, ''));
    if (letters === null) return false;
    // The initialism covers the next words whose initials spell it (skipping "of", "the", ...).
    let spelled = '';
    for (let end = l; end < long.length && spelled.length < letters.length; end++) {
      const word = long[end]!.replace(/[,;]$/, '');
      if (!STOP_IN_NAMES.has(word.toLowerCase())) spelled += initial(word);
      if (spelled === letters && matchFrom(s + 1, end + 1)) return true;
    }
    return false;
  };
  return matchFrom(0, 0);
}

/** List members: split on commas, semicolons, line breaks and "and". */
function members(value: string): string[] {
  // A comma before a digit is a thousands separator ("8,336,817"), not a list.
  return value
    .split(/\s*(?:,(?!\d)|[;\n]|\band\b)\s*/)
    .map((member) => member.trim())
    .filter(Boolean);
}

function isList(value: string): boolean {
  const parts = members(value);
  return parts.length >= 3 || (parts.length === 2 && /\band\b|[;\n]/.test(value));
}

/** The same member up to a false change. */
function sameMember(a: string, b: string): FalseChangeKind | 'SAME' | null {
  if (a === b) return 'SAME';
  if (folded(a) === folded(b)) {
    // Equal once the marks are gone: only diacritics differ; otherwise case or punctuation does.
    return withoutMarks(a) === withoutMarks(b) ? 'DIACRITICS' : 'FORMAT';
  }
  // Only spacing and punctuation differ: "CF" → "C.F.".
  if (folded(a).replace(/ /g, '') === folded(b).replace(/ /g, '')) return 'FORMAT';
  if (abbreviates(words(a), words(b)) || abbreviates(words(b), words(a))) return 'ABBREVIATION';
  if (isTypoFix(a, b)) return 'TYPO';
  return null;
}

/** What an edit of a fact's value is: no edit, a false change (REFINED), or a real update (with list members added and removed). */
export function classifyValueEdit(before: string, after: string): ValueEdit {
  const a = normalizeFactValue(before);
  const b = normalizeFactValue(after);
  if (a === b) return { kind: 'SAME' };
  if (isList(a) || isList(b)) {
    const left = members(a);
    const right = members(b);
    const unmatched = [...right];
    const removed: string[] = [];
    let reason: FalseChangeKind | null = null;
    for (const member of left) {
      const index = unmatched.findIndex((other) => sameMember(member, other) !== null);
      if (index < 0) {
        removed.push(member);
        continue;
      }
      const kind = sameMember(member, unmatched[index]!);
      if (kind !== 'SAME') reason ??= kind;
      unmatched.splice(index, 1);
    }
    if (removed.length === 0 && unmatched.length === 0) return { kind: 'REFINED', reason: reason ?? 'FORMAT' };
    return { kind: 'UPDATED', added: unmatched, removed };
  }
  const member = sameMember(a, b);
  if (member !== null) return member === 'SAME' ? { kind: 'SAME' } : { kind: 'REFINED', reason: member };
  // The same parts in another order: "English, French" → "French, English".
  const parts = (value: string): string => members(value).map(folded).sort().join('|');
  if (parts(a) === parts(b)) return { kind: 'REFINED', reason: 'FORMAT' };
  // A qualifier after the same head, added, dropped or rewritten around the same words:
  // "Frankfurt" → "Frankfurt, Germany", "Bucharest, Romania" → "Bucharest, Kingdom of Romania";
  // not "Paris, France" → "Paris, Texas", and never with a number changed.
  const [headA, ...restA] = a.split(/,(?!\d)/);
  const [headB, ...restB] = b.split(/,(?!\d)/);
  const qualifierA = new Set(folded(restA.join(' ')).split(' ').filter(Boolean));
  const qualifierB = new Set(folded(restB.join(' ')).split(' ').filter(Boolean));
  const rewordedQualifier = qualifierA.size === 0 || qualifierB.size === 0 || [...qualifierA].some((word) => qualifierB.has(word));
  if (digits(a) === digits(b) && folded(headA!) === folded(headB!) && folded(headA!) !== '' && restA.length + restB.length > 0 && rewordedQualifier) {
    return { kind: 'REFINED', reason: 'QUALIFIER' };
  }
  return { kind: 'UPDATED', added: [], removed: [] };
}
