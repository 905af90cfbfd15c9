/**
 * The answers a sentence offers a drafted question: its dates, numbers and names, from the text
 * annotation's candidate spans, with the word lists that tell people, places and times apart.
 */
import { annotate, AnswerType, candidateSpans, type AnnotatedSentence, type Token } from '../text/annotation.js';

type AnswerKind = 'DATE' | 'NAME' | 'COUNT' | 'AMOUNT' | 'NUMBER';
export const KIND_RANK: Record<AnswerKind, number> = { DATE: 0, NAME: 1, COUNT: 2, AMOUNT: 3, NUMBER: 4 };

export interface Answer {
  kind: AnswerKind;
  /** The answer's tokens (end exclusive). */
  start: number;
  end: number;
  /** The tokens its wh-phrase stands for: the answer with a currency sign, or a number with the noun it counts. */
  phraseStart: number;
  phraseEnd: number;
}

const CALENDAR_WORDS = new Set(
  'january february march april may june july august september october november december monday tuesday wednesday thursday friday saturday sunday'.split(' '),
);
/** "They" and "Their" are left alone: a plural mostly means something other than the article's subject. */
export const SUBJECT_PRONOUNS = new Set(['he', 'she', 'it']);
export const POSSESSIVE_PRONOUNS = new Set(['his', 'her', 'its']);
export const DETERMINERS = new Set(['the', 'a', 'an']);
export const TIME_PREPOSITIONS = new Set(['in', 'on', 'at', 'during', 'since']);
export const PLACE_PREPOSITIONS = new Set(['in', 'at', 'near']);
export const DIRECTION_PREPOSITIONS = new Set(['to', 'into']);
export const MOTION_VERBS = new Set('move go return travel emigrate relocate come flee transfer migrate sail fly send deport exile escape retreat'.split(' '));
/** Verbs whose subject is a state's or a thing's, not a doer's ("X became nitrogen", "X includes …"). */
export const LINKING_VERBS = new Set('become remain seem appear occur include contain consist comprise lie cover mean refer represent exist stand'.split(' '));
/** Verbs whose undergoer is nearly always a person: the object, or the subject in the passive ("married X", "X was elected"). */
export const PERSON_UNDERGOER_VERBS = new Set('marry meet succeed appoint hire elect kill assassinate murder interview bear'.split(' '));
/** Nouns that make the subject of "X is/was a …" a person. */
export const PERSON_ROLES = new Set(
  'president minister king queen emperor leader founder member player singer actor actress writer author poet painter composer musician politician physicist chemist scientist mathematician philosopher engineer architect officer director producer manager coach captain chairman governor mayor senator judge lawyer bishop priest son daughter wife husband father mother'.split(
    ' ',
  ),
);
export const PERSON_TITLES = new Set('mr mrs ms dr sir lord lady saint st king queen prince princess pope president general captain professor'.split(' '));
/** Head words of names that are places, organisations or works, never people. */
export const NON_PERSON_WORDS = new Set(
  'university college school institute academy company corporation inc ltd group party church club league association council society army navy force bank museum stadium river mountain lake island city county state republic kingdom empire bay area street park hall bridge station airport hospital foundation agency department ministry committee commission court parliament congress senate assembly union federation cup championship award prize festival war battle act treaty new north south east west united'.split(
    ' ',
  ),
);
export const COMPLEMENTIZERS = new Set(['that', 'whether', 'if']);

export const isWord = (token: Token): boolean => /[\p{L}\p{N}]/u.test(token.text);

/** Dates, numbers and names of a sentence, from its whole candidate spans; a name inside a longer one ("Stadium" in "Levi's Stadium") is not one. */
export function answersOf(sentence: AnnotatedSentence): Answer[] {
  const { tokens, entities } = sentence;
  const answers: Answer[] = [];
  const add = (kind: AnswerKind, start: number, end: number, phraseStart = start, phraseEnd = end): number =>
    answers.push({ kind, start, end, phraseStart, phraseEnd });
  for (const span of candidateSpans(sentence, 0)) {
    if (span.form !== 'whole') continue;
    const { start, end } = span;
    const entity = entities.find((e) => e.start <= start && end <= e.end);
    const inRange = /^[-–—]$/.test(tokens[start - 1]?.text ?? '') || /^[-–—]$/.test(tokens[end]?.text ?? '');
    if (entity && span.types.has(AnswerType.DATE)) {
      let numberEnd = start;
      while (numberEnd < end && tokens[numberEnd]!.pos === 'NUM') numberEnd++;
      // "7 years" is a count ("How many years"); "since 5 September 2024" is a date.
      const counted = entity.type === 'DURATION' && numberEnd > start && numberEnd < end && tokens.slice(numberEnd, end).every((token) => token.pos === 'NOUN');
      if (counted) add('COUNT', start, numberEnd, start, end);
      else if (isDate(tokens.slice(start, end))) add('DATE', start, end);
    } else if (span.types.has(AnswerType.NUMBER) && tokens[end - 1]!.pos !== 'NOUN' && !inRange) {
      const counted = countedNounEnd(tokens, end);
      if (!entity) add('NUMBER', start, end);
      else if (entity.type === 'MONEY') add('AMOUNT', start, end, Math.min(start, entity.start), Math.max(end, entity.end));
      else if (entity.type === 'CARDINAL' && counted > end) add('COUNT', start, end, start, counted);
      // "one of the first clues" is a pronoun more than a number.
      else if (entity.type !== 'ORDINAL' && !(end - start === 1 && tokens[start]!.lower === 'one')) add('NUMBER', start, end);
    } else if (span.types.has(AnswerType.NAME) && isNameAnswer(sentence, start, end)) {
      add('NAME', start, end);
    }
  }
  return answers.filter(
    (answer) =>
      !answers.some(
        (other) => other !== answer && other.start <= answer.start && answer.end <= other.end && other.end - other.start > answer.end - answer.start,
      ),
  );
}

function isNameAnswer({ tokens, entities }: AnnotatedSentence, start: number, end: number): boolean {
  if (entities.some((e) => e.start < end && start < e.end)) return false;
  if (end - start === 1 && (CALENDAR_WORDS.has(tokens[start]!.lower) || !/\p{L}.*\p{L}/u.test(tokens[start]!.text))) return false;
  if (end - start === 1 && start === tokens.findIndex(isWord) && isCommonWord(tokens[start]!)) return false;
  // A lone capitalised adjective ("American policies") describes; it does not name.
  if (end - start === 1 && tokens[start]!.pos === 'ADJ') return false;
  // Part of a hyphenated word ("Jay-Z", "Mercedes-Benz") is not a name.
  if (/^[-–]$/.test(tokens[start - 1]?.text ?? '') || /^[-–]$/.test(tokens[end]?.text ?? '')) return false;
  // "BBC Radio [5 Live]", "Saturn [I]": a name running on into a number is cut short.
  if (tokens[end]?.pos === 'NUM' || tokens[end]?.text === 'I') return false;
  // One member of a list of names ("Honda, Toyota and Nissan") is one of several right fillers.
  const listed = (joiner: Token | undefined, other: Token | undefined): boolean =>
    joiner !== undefined && other !== undefined && [',', 'and', 'or'].includes(joiner.lower) && /^\p{Lu}/u.test(other.text);
  if (listed(tokens[end], tokens[end + 1]) || listed(tokens[start - 1], tokens[start - 2])) return false;
  // An abbreviation in brackets only repeats the name before it.
  return !(tokens[start - 1]?.text === '(' && tokens[end]?.text === ')');
}

/**
 * Whether a capitalised word opening a sentence is an ordinary word ("Teachers", "Recent",
 * "Teaching"), which the tagger calls a proper noun there: alone and in lower case, it is not
 * a noun, is an inflected one, or is a gerund. Names do not inflect ("Denver", "Athens").
 */
function isCommonWord(token: Token): boolean {
  const alone = annotate(token.lower)[0]?.tokens[0];
  if (!alone) return true;
  return alone.stop || !['NOUN', 'PROPN'].includes(alone.pos) || alone.lemma !== alone.lower || alone.lower.endsWith('ing');
}

/** A date answer names a time: a number, a month or day, not just "decades" or "the same year". */
const isDate = (tokens: readonly Token[]): boolean => tokens.some((token) => /\d/.test(token.text) || CALENDAR_WORDS.has(token.lower));

/** The end of the noun phrase a number counts ("3,000 [full-time employees]"), or `from` when none follows. */
function countedNounEnd(tokens: readonly Token[], from: number): number {
  let end = from;
  while (end < tokens.length && (tokens[end]!.pos === 'ADJ' || tokens[end]!.pos === 'NOUN')) end++;
  while (end > from && tokens[end - 1]!.pos !== 'NOUN') end--;
  return end;
}
