/**
 * The shape of a simple English declarative sentence, as far as turning it into a question
 * needs: an opening adverbial, the subject, the verb group and the rest, where the clause
 * gives way to another, and the verb group with its auxiliary moved out ("was founded" →
 * "was … founded", "founded" → "did … found").
 */
import { spanText, type AnnotatedSentence, type Token } from './annotation.js';

const RELATIVE_WORDS = new Set([
  'which',
  'who',
  'whom',
  'whose',
  'where',
  'when',
  'while',
  'whereas',
  'although',
  'though',
  'because',
  'whether',
  'if',
  'unless',
]);
const CLOSING_PUNCTUATION = /^[.!?;:…]+$/;

const isVerb = (token: Token): boolean => token.pos === 'AUX' || token.pos === 'VERB';

/** A declarative sentence cut into the parts a question moves: an opening adverbial, the subject, the verb group, the rest. */
export interface Clause {
  /** An opening adverbial before the subject ("In 1990,", "However,"), `move`d to the end of the question or dropped. */
  fronted: { end: number; move: boolean } | null;
  subjectStart: number;
  subjectEnd: number;
  /** From the adverbs between subject and verb ("He later moved") to the main verb. */
  verbStart: number;
  verbEnd: number;
  /** Before the closing punctuation. */
  end: number;
}

/** The parts of a simple declarative sentence, or null where its opening, subject or verb is more than a rewrite can carry. */
export function clauseOf({ tokens, entities }: AnnotatedSentence): Clause | null {
  let end = tokens.length;
  while (end > 0 && CLOSING_PUNCTUATION.test(tokens[end - 1]!.text)) end--;
  let subjectStart = 0;
  let fronted: Clause['fronted'] = null;
  const first = tokens[0];
  if (first && ['ADP', 'SCONJ', 'ADV'].includes(first.pos)) {
    const comma = tokens.findIndex((token, i) => i < end && token.text === ',' && !entities.some((e) => e.start < i && i < e.end - 1));
    const openingDate = first.pos === 'ADP' ? entities.find((e) => e.start === 1 && e.type === 'DATE') : undefined;
    if (comma > 0 && (first.pos === 'SCONJ' || !tokens.slice(0, comma).some(isVerb))) {
      // A short opening without a name, number or date is a discourse marker ("In addition,", "For example,"): dropped, not moved.
      const marker = comma <= 3 && !tokens.slice(0, comma).some((token) => token.pos === 'PROPN' || token.pos === 'NUM');
      fronted = { end: comma, move: first.pos !== 'ADV' && !marker };
      subjectStart = comma + 1;
    } else if (openingDate) {
      fronted = { end: openingDate.end, move: true };
      subjectStart = openingDate.end;
    } else if (first.pos === 'ADV') {
      fronted = { end: 1, move: false };
      subjectStart = 1;
    } else return null;
  }
  let verbStart = subjectStart;
  while (verbStart < end && !isVerb(tokens[verbStart]!)) verbStart++;
  let subjectEnd = verbStart;
  while (subjectEnd > subjectStart && tokens[subjectEnd - 1]!.pos === 'ADV') subjectEnd--;
  const subject = tokens.slice(subjectStart, subjectEnd);
  if (verbStart >= end || !subject.some((token) => ['NOUN', 'PROPN', 'PRON', 'NUM'].includes(token.pos))) return null;
  // An apposition or a relative clause in the subject ("Smith, a lawyer,") is more than a rewrite can carry.
  if (subject.some((token) => /^[,;:]$/.test(token.text) || RELATIVE_WORDS.has(token.lower) || token.pos === 'SCONJ')) return null;
  // A bare "-ing" form is a gerund or participle ("Garda vetting has been …"), not the clause's verb.
  if (tokens[verbStart]!.pos === 'VERB' && tokens[verbStart]!.lower.endsWith('ing')) return null;
  let verbEnd = verbStart;
  while (verbEnd < end && (tokens[verbEnd]!.pos === 'AUX' || (verbEnd > verbStart && (tokens[verbEnd]!.pos === 'ADV' || tokens[verbEnd]!.lower === 'not'))))
    verbEnd++;
  if (tokens[verbEnd]?.pos === 'VERB') verbEnd++;
  return { fronted, subjectStart, subjectEnd, verbStart, verbEnd, end };
}

/** Where a clause gives way to another: a relative or subordinate clause, a coordinated verb, a semicolon, an aside in brackets. */
export function isClauseBoundary(tokens: readonly Token[], i: number): boolean {
  const token = tokens[i]!;
  const next = tokens[i + 1];
  if ([';', ':', '—'].includes(token.text) || RELATIVE_WORDS.has(token.lower)) return true;
  // A bracket with a verb in it is an aside ("(opened in 1990)"); one without only names a thing again ("(AFC)").
  if (token.text === '(') {
    const close = tokens.findIndex((other, j) => j > i && other.text === ')');
    return close < 0 || tokens.slice(i + 1, close).some(isVerb);
  }
  if (token.lower === 'that' && token.pos !== 'DET') return true;
  if (token.text === ',' && next && (['VERB', 'AUX', 'SCONJ', 'CCONJ', 'PRON'].includes(next.pos) || RELATIVE_WORDS.has(next.lower))) return true;
  return token.pos === 'CCONJ' && [tokens[i + 1], tokens[i + 2]].some((after) => after !== undefined && isVerb(after));
}

/** The verb group as a question orders it: the auxiliary that moves before the subject, and what stays after it. */
export function inverted(tokens: readonly Token[], clause: Clause): { auxiliary: string; remainder: string } | null {
  const group = tokens.slice(clause.subjectEnd, clause.verbEnd);
  const verbAt = group.findIndex(isVerb);
  const verb = group[verbAt]!;
  if (group.some((token) => token.lower === "n't")) return null;
  const adverbs = spanText(group, 0, verbAt);
  const after = (from: number): string => spanText(group, from, group.length);
  const hasMainVerb = group.slice(verbAt + 1).some(isVerb);
  if (verb.pos === 'AUX' && (hasMainVerb || verb.lemma === 'be')) return { auxiliary: verb.lower, remainder: `${adverbs} ${after(verbAt + 1)}` };
  if (verb.pos === 'AUX' && verb.lemma !== 'have') return null;
  return { auxiliary: doSupport(verb), remainder: `${adverbs} ${verb.lemma} ${after(verbAt + 1)}` };
}

/** Verbs whose past tense is their base form: "put" alone cannot tell "did" from "do", and Wikipedia mostly narrates. */
const UNCHANGED_PAST = new Set('put set cut hit let read spread cost hurt quit shut split bet broadcast cast upset beat'.split(' '));

function doSupport(verb: Token): string {
  if (verb.lower === verb.lemma) return UNCHANGED_PAST.has(verb.lemma) ? 'did' : 'do';
  const thirdPerson = [`${verb.lemma}s`, `${verb.lemma}es`, `${verb.lemma.replace(/y$/, '')}ies`];
  return thirdPerson.includes(verb.lower) || (verb.lemma === 'have' && verb.lower === 'has') ? 'does' : 'did';
}
