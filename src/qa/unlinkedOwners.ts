/**
 * A question may ask something of a name no article is about ("Who will be Trump's vice
 * president?" in a store without a Trump page). Linking then finds the attribute elsewhere (the
 * Vice President of Argentina), and its value, however sure the gate is of it, answers another
 * question. Such an answer counts only when the words it was read from name the owner. So does
 * one read from another article than the owner's ("Who is France's finance minister?" was answered
 * from Germany's page with its finance minister, adopted at 0.98).
 */
import { splitSentences } from '../ingest/sentenceSplitter.js';
import { countryNamesOf } from '../text/countries.js';
import { holdsWords, normalizeAnswer, spacedWords } from '../text/normalize.js';
import type { LinkedSubject } from './subjects.js';

/** "Trump's" is normalised to "trump s". */
const ownsSomething = (words: string, name: string): boolean => holdsWords(words, `${name} s`);

/** Words after "who" that make no verb of their own: "Who is Manchester City's captain?" asks of the name only by its possessive. */
const AUXILIARIES = new Set([
  'is',
  'was',
  'are',
  'were',
  'am',
  'will',
  'shall',
  'would',
  'do',
  'does',
  'did',
  'has',
  'have',
  'had',
  'can',
  'could',
  'should',
  'must',
  'may',
  'might',
  's',
]);
/** Auxiliaries that make what follows a name a noun of it: "Who is Manchester City manager?". */
const COPULAS = new Set(['is', 'was', 'are', 'were', 's']);
/** Words between "who" and its verb that are no verb either: "Who currently manages …". */
const ADVERBS = new Set(['now', 'currently', 'presently', 'still', 'also', 'then']);

/**
 * Whether the question asks something of `name` by its verb: as the verb's object ("Who manages
 * Manchester City?", "Who is managing …", "Who currently manages …") or, after "is" or "was", as
 * the owner of the noun that follows ("Who is Manchester City manager?"). "Who did Manchester City
 * beat?" asks what the name did.
 */
function askedByVerb(words: string, name: string): boolean {
  const [wh, ...rest] = words.trim().split(' ');
  if (wh !== 'who' && wh !== 'what') return false;
  const verbAt = rest.findIndex((word) => !AUXILIARIES.has(word) && !ADVERBS.has(word));
  if (verbAt < 0) return false;
  const startsWithName = (from: number): boolean => ` ${rest.slice(from).join(' ')} `.startsWith(` ${name} `);
  if (!startsWithName(verbAt)) return startsWithName(verbAt + 1);
  const before = rest.slice(0, verbAt);
  return (
    before.some((word) => COPULAS.has(word)) && before.every((word) => COPULAS.has(word) || ADVERBS.has(word)) && rest.length > verbAt + name.split(' ').length
  );
}

/** Of the question's names that no article is titled with, those it asks something of: written possessively ("Trump's"), after "of" ("the captain of Manchester City") or by its verb (askedByVerb). */
export function unlinkedOwners(question: string, unknownNames: readonly string[]): string[] {
  const words = spacedWords(question);
  return unknownNames.filter((name) => ownsSomething(words, name) || holdsWords(words, `of ${name}`) || askedByVerb(words, name));
}

/**
 * The words an answer was read in: each sentence of `text` that holds it, with the one before it (where "his" or
 * "the club" points); the whole text when no sentence holds it. A passage naming the owner elsewhere ("defeating
 * Manchester City in the final") does not make its manager Manchester City's.
 */
function wordsAround(answer: string, text: string): string {
  const sentences = splitSentences(text).map((sentence) => spacedWords(sentence.text));
  const said = normalizeAnswer(answer);
  const around = sentences.flatMap((sentence, i) => (holdsWords(sentence, said) ? [sentences[i - 1] ?? '', sentence] : []));
  return around.length > 0 ? around.join('') : spacedWords(text);
}

/** Why `answer`, read from `evidenceText`, does not answer a question about `owners`; null when the words it was read in name each of them. */
export function ownerObjection(owners: readonly string[], answer: string, evidenceText: string): string | null {
  if (owners.length === 0) return null;
  const words = wordsAround(answer, evidenceText);
  const unnamed = owners.filter((owner) => !holdsWords(words, owner));
  return unnamed.length === 0
    ? null
    : `the question asks something of ${unnamed.map((owner) => `"${owner}"`).join(', ')}, which no article is about and the words read do not name`;
}

/** A word that names a country by its people, not by the title's own words ("Dutch" for Netherlands). */
const isDemonymOf = (word: string, subject: LinkedSubject): boolean => !holdsWords(spacedWords(subject.title), word) && countryNamesOf(word) !== null;

/**
 * Why an answer read in `evidence` does not answer a question that asks something of a linked
 * article written possessively ("France's") or by its people's adjective ("the Dutch finance
 * minister"): it was read in another article, whose words name neither the owner's word nor its
 * title. The adjective binds more loosely ("Which French regions will host the 2030 Winter
 * Games?" asks of the Games): it makes an owner only where the answer was read in an article the
 * question does not name. Null when it may answer.
 */
export function linkedOwnerObjection(question: string, subjects: readonly LinkedSubject[], evidence: { articleId: string; text: string }): string | null {
  const words = spacedWords(question);
  const readInNamed = subjects.some((subject) => subject.articleId === evidence.articleId);
  const isOwner = (word: string, subject: LinkedSubject): boolean => ownsSomething(words, word) || (!readInNamed && isDemonymOf(word, subject));
  const owned = subjects.map((subject) => ({ subject, word: subject.words.find((word) => isOwner(word, subject)) })).filter(({ word }) => word !== undefined);
  if (owned.length === 0 || owned.some(({ subject }) => subject.articleId === evidence.articleId)) return null;
  const text = spacedWords(evidence.text);
  if (owned.some(({ subject, word }) => holdsWords(text, word!) || holdsWords(text, normalizeAnswer(subject.title)))) return null;
  return `the question asks something of "${owned[0]!.subject.title}", and the answer was read in ${evidence.articleId}, whose words do not name it`;
}
