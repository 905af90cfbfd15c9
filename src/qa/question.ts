/** What a question asks for and the words and cues the answerers and the retrieval decision work from. */
import { annotate, AnswerType, type Token } from '../text/annotation.js';
import { normalizeAnswer } from '../text/normalize.js';

export interface QuestionAnalysis {
  text: string;
  answerType: AnswerType;
  tokens: Token[];
  /** Stems of the content words (no stop words, no wh-words). */
  terms: Set<string>;
  /** Words and phrases saying the answer depends on when it is asked ("current", "as of", a year). */
  temporalCues: string[];
  /** Years the question names. */
  years: number[];
  /** "before that", "previous", …: the question asks for an earlier value than the one in context. */
  asksForEarlier: boolean;
  /** "after Rishi Sunak", "before Donald Tusk": the question asks for the value beside a named one. */
  neighbour: NamedNeighbour | null;
  /** "when Paris hosted the Olympics": the question asks about the time of another event. */
  event: EventClause | null;
}

/** A value asked for by its place in time among the others: "the first prime minister", "which club did he manage last". */
export interface Ordinal {
  side: 'first' | 'last';
  /** The words read ("the first", "Liverpool's last", "first"). */
  text: string;
}

/** The event whose time a question asks about, in its own words. */
export interface EventClause {
  /** The event, as written ("Paris hosted the Olympics"). */
  clause: string;
  /** The words read ("when Paris hosted the Olympics"). */
  text: string;
}

/** A value asked for by its place beside another, named value. */
export interface NamedNeighbour {
  /** Whether the asked value came before or after the named one. */
  side: 'before' | 'after';
  /** The named value, as written ("Rishi Sunak"). */
  name: string;
  /** The words read ("after Rishi Sunak"). */
  text: string;
}

const TYPE_RULES: Array<[RegExp, AnswerType]> = [
  [/\b(when|what (year|date|day|month|time|century|decade)|which (year|date|day|month|century|decade)|since when)\b/, AnswerType.DATE],
  [
    /\b(how (many|much|long|far|old|tall|high|large|big|deep|wide|fast)|what (percentage|percent|number|amount|rate|size|population|share))\b/,
    AnswerType.NUMBER,
  ],
  [
    /\b(where|what (city|country|state|place|region|continent|town|location|island|river)|which (city|country|state|place|region|continent|town|location|island|river))\b/,
    AnswerType.PLACE,
  ],
  [/\b(who|whom|whose|which (person|team|club|company|organi[sz]ation|group|party|player|country's))\b/, AnswerType.NAME],
];

const TEMPORAL_PATTERNS: RegExp[] = [
  /\b(now|nowadays|today|currently|current|presently|at present|latest|newest|most recent|recently|recent|incumbent|still|so far|to date|as of|this (year|month|week|season)|right now|these days|new)\b/g,
];
const EARLIER_WORDS = /\b(before (that|him|her|them|then)|previous(ly)?|prior|former|predecessor|earlier|preceded|until then)\b/i;
/**
 * "before Donald Tusk", "Who succeeded Rishi Sunak?", "After Klopp's exit": a name that is no
 * month, weekday or feast, and is not followed by a number (those are times: "after Jan 2024",
 * "after Euro 2020"). The lookahead keeps the name whole: no shorter part of it matches instead.
 */
const BESIDE_NAME =
  /\b([Bb]efore|[Pp]receded|[Aa]fter|[Ff]ollowing|[Ss]ucceeded|[Rr]eplaced) (?!(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Christmas|Easter)\b)(\p{Lu}[\p{L}'’.-]*(?: \p{Lu}[\p{L}'’.-]*)*)(?![\p{L}'’.-]| ?\d| \p{Lu})/u;
const SIDE_OF: Record<string, NamedNeighbour['side']> = {
  before: 'before',
  preceded: 'before',
  after: 'after',
  following: 'after',
  succeeded: 'after',
  replaced: 'after',
};

/** The named value a question asks for the one before or after ("Who took over after Jürgen Klopp?"), or null. */
export function namedNeighbour(question: string): NamedNeighbour | null {
  const match = BESIDE_NAME.exec(question);
  if (!match) return null;
  const name = match[2]!.replace(/['’]s$/, '');
  return { side: SIDE_OF[match[1]!.toLowerCase()]!, name, text: `${match[1]} ${name}` };
}

/**
 * "Who was prime minister when Paris hosted the Olympics?": "when" or "while" anywhere but at the
 * start, then a clause of at least two words, up to a comma or the end. A question that asks for a
 * time ("When did …?", "And when did he leave?", "Tell me when the Wall fell") dates nothing by it,
 * nor does "since when".
 */
const EVENT_CLAUSE = /(?<!^\s*|\b[Ss]ince\s)\b([Ww]hen|[Ww]hile)\s+([^?.!;,]*[\p{L}\p{N}][^?.!;,]*)/u;

/** The event a question dates its answer by ("when Paris hosted the Olympics"), or null. */
export function eventClause(question: string, answerType = expectedAnswerType(question)): EventClause | null {
  if (answerType === AnswerType.DATE) return null;
  const match = EVENT_CLAUSE.exec(question);
  const clause = match?.[2]?.trim() ?? '';
  if (!match || clause.split(/\s+/).length < 2) return null;
  return { clause, text: match[0].trim() };
}

/**
 * "the first prime minister", "Liverpool's last manager", "which club did he manage first?": an
 * ordinal before a noun that is no unit of time or part of a match ("the first time", "the last
 * round", "last name"), or ending the question.
 */
const ORDINAL_BEFORE_NOUN =
  /\b(?:the|his|her|its|their|[\p{L}]+['’]s?)\s+(first|earliest|last)(?=\s+(?!(?:time|times|name|names|ever|round|half|leg|quarter|minute|day|week|month|year|season|decade|century|night|one|two|few|several|goal|goals|match|game|race|stage|lap|place|position|prize)\b)\p{L})/iu;
/** "Which club did he manage first?"; not a placing ("Who finished first?", "Which team came last?"). */
const ORDINAL_AT_END = /(?<!\b(?:finish(?:ed|es)?|c[ao]me|placed|ranked|ended|end(?:s)?|was|were|is|are)\s+)\b(first|last)\s*[?.!]*\s*$/i;

/** The ordinal a question asks by, or null; a question for a time or a number asks nothing of the kind ("When was Everest first climbed?"). */
export function ordinalOf(question: string, answerType: AnswerType): Ordinal | null {
  if (answerType === AnswerType.DATE || answerType === AnswerType.NUMBER) return null;
  const match = ORDINAL_BEFORE_NOUN.exec(question) ?? ORDINAL_AT_END.exec(question);
  if (!match) return null;
  const word = match[1]!.toLowerCase();
  // "Liverpool's last": the possessor is the subject, not part of the ordinal.
  const text = match[0].replace(/^[\p{L}]+['’]s?\s+/u, '').replace(/[?.!\s]+$/, '');
  return { side: word === 'last' ? 'last' : 'first', text };
}

/** The words by which a question asks for an earlier value than the one it names or implies, or null. */
export function earlierCue(question: string): string | null {
  const neighbour = namedNeighbour(question);
  return neighbour?.side === 'before' ? neighbour.text : (EARLIER_WORDS.exec(question)?.[0] ?? null);
}
const WH_WORDS = new Set(['who', 'whom', 'whose', 'what', 'which', 'when', 'where', 'why', 'how']);

export function expectedAnswerType(question: string): AnswerType {
  const lower = question.toLowerCase();
  // The first rule whose wh-phrase comes earliest decides: "Who won in what year?" asks for a name.
  let best: { at: number; type: AnswerType } | null = null;
  for (const [pattern, type] of TYPE_RULES) {
    const match = pattern.exec(lower);
    if (match && (best === null || match.index < best.at)) best = { at: match.index, type };
  }
  return best?.type ?? AnswerType.THING;
}

export function analyseQuestion(question: string): QuestionAnalysis {
  const tokens = annotate(question).flatMap((sentence) => sentence.tokens);
  const lower = question.toLowerCase();
  const temporalCues = TEMPORAL_PATTERNS.flatMap((pattern) => [...lower.matchAll(pattern)].map((match) => match[0]));
  const years = [...question.matchAll(/\b(1[5-9]\d\d|2\d\d\d)\b/g)].map((match) => Number(match[1]));
  const answerType = expectedAnswerType(question);
  return {
    text: question,
    answerType,
    tokens,
    terms: new Set(tokens.filter((token) => !token.stop && !WH_WORDS.has(token.lower) && /[\p{L}\p{N}]/u.test(token.text)).map((token) => token.stem)),
    temporalCues: [...new Set([...temporalCues, ...years.map(String)])],
    years,
    asksForEarlier: earlierCue(question) !== null,
    neighbour: namedNeighbour(question),
    event: eventClause(question, answerType),
  };
}

/**
 * The proper names a question mentions, lower case, each run of capitalised words one name
 * ("Reserve Bank of India" → "reserve bank of india"); the wh-word and the first word are not names,
 * nor are the words of the question's time phrase (`timePhrase`, as its time scope read it).
 */
export function questionNames(question: QuestionAnalysis, timePhrase = ''): string[] {
  const names: string[] = [];
  let run: string[] = [];
  const close = (): void => {
    while (run.length > 0 && NAME_JOINERS.has(run[run.length - 1]!)) run.pop();
    if (run.length > 0) names.push(run.join(' '));
    run = [];
  };
  question.tokens.forEach((token, i) => {
    const capitalised = i > 0 && /^\p{Lu}/u.test(token.text) && !WH_WORDS.has(token.lower);
    if (capitalised || token.pos === 'PROPN') run.push(normalizeAnswer(token.text));
    else if (run.length > 0 && NAME_JOINERS.has(token.lower)) run.push(token.lower);
    else close();
  });
  close();
  // "mid-2024" and "September" are when the question asks about, not whom.
  const timeWords = new Set(normalizeAnswer(timePhrase).split(' '));
  return [...new Set(names.filter((name) => name !== '' && !name.split(' ').every((word) => timeWords.has(word))))];
}

const NAME_JOINERS = new Set(['of', 'de', 'the', 'and', 'van', 'von', 'del', 'da']);
