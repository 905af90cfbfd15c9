/**
 * GrowOVER-QA questions without a language model. Each answer is a date, number or name that
 * the text annotation finds in an evidence sentence, and its question is that sentence turned
 * around it ("The company was founded in 1990." → "In what year was the company founded?").
 * Where a rewrite would be a guess (the answer in a subordinate clause, behind a preposition
 * whose wh-word is unclear, inside a longer phrase), the question is a cloze instead: the
 * sentence with the answer blanked.
 *
 * A question has to be answerable without its paragraph. A singular subject pronoun opening
 * the sentence ("He", "She", "It"; "His", "Her", "Its") becomes the article's title, and a
 * question that still names nothing of the title gets it in brackets in front:
 * "(Super Bowl 50) Where was the game played?".
 */
import { annotate, MAX_ANSWER_TOKENS, spanText, type AnnotatedSentence, type Token } from '../text/annotation.js';
import { clauseOf, inverted, isClauseBoundary, type Clause } from '../text/clauses.js';
import { english } from '../text/language.js';
import { holdsWords, normalizeAnswer, spacedWords } from '../text/normalize.js';
import { alignTokens } from '../text/tokenAlignment.js';
import {
  answersOf,
  COMPLEMENTIZERS,
  DETERMINERS,
  DIRECTION_PREPOSITIONS,
  isWord,
  KIND_RANK,
  LINKING_VERBS,
  MOTION_VERBS,
  NON_PERSON_WORDS,
  PERSON_ROLES,
  PERSON_TITLES,
  PERSON_UNDERGOER_VERBS,
  PLACE_PREPOSITIONS,
  POSSESSIVE_PRONOUNS,
  SUBJECT_PRONOUNS,
  TIME_PREPOSITIONS,
  type Answer,
} from './sentenceAnswers.js';
import type { DraftQuestion, GenerationInput, QuestionGenerator } from './types.js';

const MAX_QUESTIONS = 5;
/** Spreads the candidates over the evidence before a second sentence contributes its third answer. */
const MAX_PER_SENTENCE = 2;
/** Longer sentences are lists or run-ons: their questions read badly even as clozes. */
const MAX_SENTENCE_TOKENS = 60;
const BLANK = '_____';

/** The sentence's first word in the middle of a question: "The" → "the"; names, acronyms and "I" keep their capital. */
function lowerFirst(tokens: readonly Token[], start: number, end: number): string {
  const text = spanText(tokens, start, end);
  const first = tokens[start];
  if (start !== 0 || !first || first.pos === 'PROPN' || first.text === 'I' || /^\p{Lu}{2}/u.test(first.text)) return text;
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** "It is clear that …", "It was decided to …": an "it" that stands for the clause after it, not for the article. */
function isExpletiveIt(tokens: readonly Token[], at: number): boolean {
  if (tokens[at]!.lower !== 'it' || tokens[at + 1]?.lemma !== 'be') return false;
  let next = at + 2;
  if (tokens[next]?.lower === 'not') next++;
  return (
    ['ADJ', 'VERB'].includes(tokens[next]?.pos ?? '') &&
    (COMPLEMENTIZERS.has(tokens[next + 1]?.lower ?? '') || tokens[next + 1]?.lower === 'to' || tokens[next + 1]?.text === ',')
  );
}

/** A clause's subject with a pronoun read as the article's title ("He" → "Marie Curie", "Its" → "Tesla's"). */
function subjectText(tokens: readonly Token[], start: number, end: number, title: string): string {
  const first = tokens[start];
  if (first && title !== '' && first.pos === 'PRON' && !isExpletiveIt(tokens, start)) {
    if (end - start === 1 && SUBJECT_PRONOUNS.has(first.lower)) return title;
    if (POSSESSIVE_PRONOUNS.has(first.lower)) return `${title}'s${spanText(tokens, start, end).slice(first.text.length)}`;
  }
  return lowerFirst(tokens, start, end);
}

/**
 * Whether "Who" asks for a name, from the little the sentence says: a title ("Dr."), a verb
 * that wants a person, the doer of an action, or a subject of "is"/"was" with a role or a
 * name of two or more words, never a plural (a team) or a name with a place's or an
 * organisation's word. Otherwise "What" asks for it.
 */
function isPersonName(tokens: readonly Token[], clause: Clause, answer: Answer, asSubject: boolean): boolean {
  const name = tokens.slice(answer.start, answer.end);
  const last = name.at(-1)!;
  if (name.some((token) => NON_PERSON_WORDS.has(token.lower)) || tokens[answer.start - 1]?.lower === 'the' || last.lemma !== last.lower) return false;
  if (PERSON_TITLES.has(name[0]!.lower.replace(/\.$/, ''))) return true;
  const group = tokens.slice(clause.verbStart, clause.verbEnd);
  const mainVerb = group.filter((token) => token.pos === 'VERB').at(-1)?.lemma ?? '';
  const passive = mainVerb !== '' && group.some((token) => token.lemma === 'be');
  if (!asSubject || passive) return PERSON_UNDERGOER_VERBS.has(mainVerb);
  // The doer of an action is asked for with "Who", which quizzes use for people, countries and organisations alike.
  if (mainVerb !== '' && !LINKING_VERBS.has(mainVerb)) return true;
  const fullName = name.filter((token) => /^\p{Lu}/u.test(token.text)).length >= 2;
  return fullName || tokens.slice(answer.end, clause.end).some((token) => PERSON_ROLES.has(token.lower));
}

/** "the American singer X" → "Which American singer": the modifiers in front of a name, ending in a common noun; null when the name stands alone. */
function whichPhrase(tokens: readonly Token[], answer: Answer, floor: number): { wh: string; start: number } | null {
  let start = answer.start;
  while (start > floor && (['ADJ', 'NOUN', 'PROPN'].includes(tokens[start - 1]!.pos) || /^[()]$/.test(tokens[start - 1]!.text))) start--;
  if (start === answer.start || tokens[answer.start - 1]!.pos !== 'NOUN' || /^\p{Lu}/u.test(tokens[answer.start - 1]!.text)) return null;
  const modifiers = lowerFirst(tokens, start, answer.start);
  if (start > floor && DETERMINERS.has(tokens[start - 1]!.lower)) start--;
  return { wh: `Which ${modifiers}`, start };
}

function dateWh(preposition: string, date: string): string {
  if (preposition === 'since') return 'Since when';
  return preposition === 'in' && /^\d{4}$/.test(date) ? 'In what year' : 'When';
}

interface WhPhrase {
  wh: string;
  /** The tokens it replaces. */
  start: number;
  end: number;
}

/** The wh-phrase for an answer after the verb group, with the preposition or article that goes with it; null when no wh-word fits safely. */
function whPhraseAfterVerb(sentence: AnnotatedSentence, clause: Clause, answer: Answer): WhPhrase | null {
  const { tokens } = sentence;
  const floor = clause.verbEnd;
  let start = answer.phraseStart;
  if (start > floor && DETERMINERS.has(tokens[start - 1]!.lower)) start--;
  const closing = tokens.findIndex((token, i) => i > answer.phraseEnd && token.text === ')');
  // A bracket right after the answer restates it ("33 lb (15 kg)") and goes with it.
  const phraseEnd = tokens[answer.phraseEnd]?.text === '(' && closing > 0 ? closing + 1 : answer.phraseEnd;
  // Followed by a noun, the answer modifies it ("the 1,600 mm broad gauge"); followed by a verb, it is a subject the parse missed.
  const next = tokens[phraseEnd];
  if (next && (['NOUN', 'PROPN', 'NUM', 'PART', 'VERB'].includes(next.pos) || /^[-–—]$/.test(next.text) || next.lower === 'to')) return null;
  // The tagger calls "since" a conjunction even before a date.
  const preposition = start > floor && (tokens[start - 1]!.pos === 'ADP' || tokens[start - 1]!.lower === 'since') ? tokens[start - 1]!.lower : null;
  const group = tokens.slice(clause.verbStart, clause.verbEnd);
  switch (answer.kind) {
    case 'DATE':
      if (!preposition || !TIME_PREPOSITIONS.has(preposition)) return null;
      return { wh: dateWh(preposition, spanText(tokens, answer.start, answer.end)), start: start - 1, end: phraseEnd };
    case 'COUNT':
      return start === floor ? { wh: `How many ${spanText(tokens, answer.end, answer.phraseEnd)}`, start, end: phraseEnd } : null;
    case 'AMOUNT':
      return start === floor ? { wh: 'How much', start, end: phraseEnd } : null;
    case 'NUMBER':
      return null;
    case 'NAME': {
      const which = whichPhrase(tokens, answer, floor);
      if (which) return which.start === floor ? { ...which, end: phraseEnd } : null;
      if (start === floor) return { wh: isPersonName(tokens, clause, answer, false) ? 'Who' : 'What', start, end: phraseEnd };
      // "sent a telegram to the Academy in Paris": after a noun, the phrase may belong to the noun, not the verb.
      const beforePreposition = tokens[start - 2]!;
      const adverbial = start - 1 === floor || beforePreposition.text === ',' || sentence.entities.some((e) => e.end === start - 1 && e.type === 'DATE');
      if (!adverbial) return null;
      const mainVerb = group.filter((token) => token.pos === 'VERB').at(-1);
      const moving = mainVerb !== undefined && MOTION_VERBS.has(mainVerb.lemma);
      if (preposition && (PLACE_PREPOSITIONS.has(preposition) || (moving && DIRECTION_PREPOSITIONS.has(preposition)))) {
        // "in Santa Clara, California": the region after the comma goes with the place.
        let end = phraseEnd;
        if (tokens[end]?.text === ',' && tokens[end + 1]?.pos === 'PROPN') for (end += 1; tokens[end]?.pos === 'PROPN';) end++;
        return { wh: 'Where', start: start - 1, end };
      }
      const passive = group.some((token) => token.lemma === 'be') && group.at(-1)?.pos === 'VERB';
      return preposition === 'by' && passive ? { wh: 'By whom', start: start - 1, end: phraseEnd } : null;
    }
  }
}

/** Joins question parts and tidies the seams the cuts leave (", ,", " ,", a trailing comma). */
function tidy(parts: readonly string[]): string {
  const joined = parts
    .join(' ')
    .replace(/\s+/g, ' ')
    .replace(/\s+,/g, ',')
    .replace(/,(\s*,)+/g, ',')
    .replace(/^[\s,]+|[\s,;:]+$/g, '');
  return `${joined.charAt(0).toUpperCase()}${joined.slice(1)}?`;
}

function movedFronted(tokens: readonly Token[], clause: Clause): string {
  if (!clause.fronted?.move) return '';
  const text = spanText(tokens, 0, clause.fronted.end);
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** The wh-question for an answer, or null where the rewrite would be a guess. */
function whQuestion(sentence: AnnotatedSentence, clause: Clause, answer: Answer, title: string): string | null {
  const { tokens } = sentence;
  // What follows a comma after the answer is an aside, a participle or another clause ("…, racking up 487 yards"): the question ends before it.
  const insideEntity = (i: number): boolean => sentence.entities.some((e) => e.start < i && i < e.end - 1);
  const restEnd = (from: number): number => {
    for (let i = from; i < clause.end; i++) if (isClauseBoundary(tokens, i) || (tokens[i]!.text === ',' && !insideEntity(i))) return i;
    return clause.end;
  };
  // A cut before the verb's own clause ("confirmed [that …]") or after a preposition ("to [which …]") leaves the question unfinished.
  const cutsCleanly = (end: number): boolean => {
    if (end === clause.end) return true;
    const next = tokens[end]!.text === ',' ? tokens[end + 1] : tokens[end];
    return !COMPLEMENTIZERS.has(next?.lower ?? '') && !['ADP', 'DET', 'ADJ', 'CCONJ'].includes(tokens[end - 1]!.pos);
  };
  const adverbsBeforeVerb = spanText(tokens, clause.subjectEnd, clause.verbStart);
  if (answer.start >= clause.subjectStart && answer.phraseEnd <= clause.subjectEnd) {
    if (answer.phraseEnd !== clause.subjectEnd) return null;
    let wh: string | null = null;
    const which = answer.kind === 'NAME' ? whichPhrase(tokens, answer, clause.subjectStart) : null;
    if (which) wh = which.start === clause.subjectStart ? which.wh : null;
    else if (
      answer.phraseStart === clause.subjectStart ||
      (answer.phraseStart === clause.subjectStart + 1 && DETERMINERS.has(tokens[clause.subjectStart]!.lower))
    ) {
      if (answer.kind === 'NAME') wh = isPersonName(tokens, clause, answer, true) ? 'Who' : 'What';
      if (answer.kind === 'COUNT') wh = `How many ${spanText(tokens, answer.end, answer.phraseEnd)}`;
    }
    if (!wh || !cutsCleanly(restEnd(clause.verbEnd))) return null;
    return tidy([wh, adverbsBeforeVerb, spanText(tokens, clause.verbStart, restEnd(clause.verbEnd)), movedFronted(tokens, clause)]);
  }
  const verb = inverted(tokens, clause);
  if (!verb) return null;
  const subject = subjectText(tokens, clause.subjectStart, clause.subjectEnd, title);
  if (clause.fronted && answer.phraseEnd <= clause.fronted.end) {
    // Only an opening "In 1990" that is nothing but the date becomes the wh-phrase.
    const preposition = tokens[0]!.lower;
    if (
      answer.kind !== 'DATE' ||
      answer.phraseEnd !== clause.fronted.end ||
      !TIME_PREPOSITIONS.has(preposition) ||
      !(answer.start === 1 || (answer.start === 2 && DETERMINERS.has(tokens[1]!.lower)))
    )
      return null;
    if (!cutsCleanly(restEnd(clause.verbEnd))) return null;
    return tidy([
      dateWh(preposition, spanText(tokens, answer.start, answer.end)),
      verb.auxiliary,
      subject,
      verb.remainder,
      spanText(tokens, clause.verbEnd, restEnd(clause.verbEnd)),
    ]);
  }
  if (answer.start < clause.verbEnd) return null;
  const phrase = whPhraseAfterVerb(sentence, clause, answer);
  if (!phrase) return null;
  for (let i = clause.verbEnd; i < phrase.start; i++) if (isClauseBoundary(tokens, i)) return null;
  // "in 1773 [or earlier]": what is coordinated with the answer goes with it.
  const end = tokens[phrase.end]?.pos === 'CCONJ' ? phrase.end : restEnd(phrase.end);
  if (!cutsCleanly(end)) return null;
  const rest = [spanText(tokens, clause.verbEnd, phrase.start), spanText(tokens, phrase.end, end)];
  return tidy([phrase.wh, verb.auxiliary, subject, verb.remainder, ...rest, movedFronted(tokens, clause)]);
}

/** The sentence with the answer blanked, its opening pronoun read as the title. */
function clozeQuestion({ tokens }: AnnotatedSentence, answer: Answer, title: string): string {
  let opening = 0;
  const first = tokens[0];
  if (
    title !== '' &&
    first?.pos === 'PRON' &&
    (SUBJECT_PRONOUNS.has(first.lower) || POSSESSIVE_PRONOUNS.has(first.lower)) &&
    !isExpletiveIt(tokens, 0) &&
    answer.start > 0
  )
    opening = 1;
  const before =
    opening === 1 ? subjectText(tokens, 0, 1, title) + spanText(tokens, 0, answer.start).slice(first!.text.length) : spanText(tokens, 0, answer.start);
  const after = answer.end < tokens.length ? tokens[answer.end]!.space + spanText(tokens, answer.end, tokens.length) : '';
  return `${before}${answer.start > 0 ? tokens[answer.start]!.space : ''}${BLANK}${after}`;
}

/** Lowercase content words (no stop words, no lone letters), which the answer must not share with its question. */
function contentWords(text: string): Set<string> {
  const nlp = english();
  const tokens = nlp.readDoc(normalizeAnswer(text)).tokens();
  const words = tokens.out() as string[];
  const stops = tokens.out(nlp.its.stopWordFlag) as unknown as boolean[];
  return new Set(words.filter((word, i) => !stops[i] && (word.length > 1 || /\d/.test(word))));
}

/** Whether a question gives its answer away, whole or by a content word. */
export function questionRevealsAnswer(question: string, answer: string): boolean {
  const normalized = normalizeAnswer(answer);
  if (normalized === '' || holdsWords(spacedWords(question), normalized)) return true;
  const questionWords = contentWords(question);
  return [...contentWords(answer)].some((word) => questionWords.has(word));
}

function namesTitle(question: string, title: string): boolean {
  const questionWords = contentWords(question);
  const titleWords = contentWords(title);
  return titleWords.size === 0 || [...titleWords].some((word) => questionWords.has(word));
}

/** The tokens of a text's sentences end to end, each with the sentence it comes from. */
function flatten(sentences: readonly AnnotatedSentence[]): Array<{ sentence: number; index: number; token: Token }> {
  return sentences.flatMap((sentence, s) => sentence.tokens.map((token, index) => ({ sentence: s, index, token })));
}

/** What a CHANGED sentence's edit looks like from the new version: its changed tokens, and the old span an answer replaced. */
class SentenceChange {
  private readonly mapping: number[];
  private readonly changedAfter: number[];
  private readonly changedBefore: number[];
  private readonly offsets: number[];

  constructor(
    private readonly before: ReturnType<typeof flatten>,
    private readonly beforeSentences: readonly AnnotatedSentence[],
    after: readonly AnnotatedSentence[],
  ) {
    const afterTokens = flatten(after);
    this.mapping = alignTokens(
      before.map((entry) => entry.token.lower),
      afterTokens.map((entry) => entry.token.lower),
    );
    this.changedAfter = this.mapping.flatMap((old, i) => (old < 0 ? [i] : []));
    const kept = new Set(this.mapping);
    this.changedBefore = before.flatMap((_, i) => (kept.has(i) ? [] : [i]));
    let offset = 0;
    this.offsets = after.map((sentence) => (offset += sentence.tokens.length) - sentence.tokens.length);
  }

  touches(sentence: number, answer: Answer): boolean {
    const start = this.offsets[sentence]! + answer.start;
    const end = this.offsets[sentence]! + answer.end;
    return this.changedAfter.some((i) => i >= start && i < end);
  }

  /** The old text in the answer's place, when the answer holds the whole edit (so the rest of the sentence, and the question, read the same). */
  previousAnswer(sentence: number, answer: Answer): string | null {
    const start = this.offsets[sentence]! + answer.start;
    const end = this.offsets[sentence]! + answer.end;
    if (!this.touches(sentence, answer) || this.changedAfter.some((i) => i < start || i >= end)) return null;
    const anchorBefore = this.mapping
      .slice(0, start)
      .filter((old) => old >= 0)
      .at(-1);
    const anchorAfter = this.mapping.slice(end).find((old) => old >= 0);
    let oldStart = this.mapping[start]! >= 0 ? this.mapping[start]! : (anchorBefore ?? -1) + 1;
    let oldEnd = this.mapping[end - 1]! >= 0 ? this.mapping[end - 1]! + 1 : (anchorAfter ?? this.before.length);
    if (this.changedBefore.some((i) => i < oldStart || i >= oldEnd)) return null;
    while (oldStart < oldEnd && !isWord(this.before[oldStart]!.token)) oldStart++;
    while (oldEnd > oldStart && !isWord(this.before[oldEnd - 1]!.token)) oldEnd--;
    if (oldEnd <= oldStart || oldEnd - oldStart > MAX_ANSWER_TOKENS) return null;
    const first = this.before[oldStart]!;
    if (this.before[oldEnd - 1]!.sentence !== first.sentence) return null;
    return spanText(this.beforeSentences[first.sentence]!.tokens, first.index, first.index + oldEnd - oldStart);
  }
}

interface Candidate {
  draft: DraftQuestion;
  rank: number[];
}

function candidatesOf(input: GenerationInput, evidence: number): Candidate[] {
  const { text, previousText } = input.sentences[evidence]!;
  const sentences = annotate(text);
  const change = input.type === 'CHANGED' && previousText ? new SentenceChange(flatten(annotate(previousText)), annotate(previousText), sentences) : null;
  const title = input.title.replace(/\s+/g, ' ').trim();
  const candidates: Candidate[] = [];
  sentences.forEach((sentence, s) => {
    if (sentence.tokens.length > MAX_SENTENCE_TOKENS) return;
    const clause = clauseOf(sentence);
    for (const answer of answersOf(sentence)) {
      const answerText = spanText(sentence.tokens, answer.start, answer.end);
      const wh = clause ? whQuestion(sentence, clause, answer, title) : null;
      const bare = wh ?? clozeQuestion(sentence, answer, title);
      const question = namesTitle(bare, title) || questionRevealsAnswer(title, answerText) ? bare : `(${title}) ${bare}`;
      const previous = change?.previousAnswer(s, answer) ?? null;
      // The question must stand on more than its wh-word, quote its evidence verbatim and give away neither answer.
      if (contentWords(bare).size < 2 || !text.includes(answerText) || [answerText, previous ?? ''].some((a) => a !== '' && questionRevealsAnswer(question, a)))
        continue;
      if (previous && normalizeAnswer(previous) === normalizeAnswer(answerText)) continue;
      const changeRank = !change ? 0 : previous ? 0 : change.touches(s, answer) ? 1 : 2;
      candidates.push({
        draft: { question, answers: [answerText], previousAnswers: previous ? [previous] : [], evidence: [evidence], form: wh ? 'wh' : 'cloze' },
        // A cloze of a name used as a modifier ("the _____ astronauts") admits many fillers: it comes last.
        rank: [changeRank, wh ? 0 : 1, !wh && sentence.tokens[answer.end]?.pos === 'NOUN' ? 1 : 0, KIND_RANK[answer.kind], evidence, s, answer.start],
      });
    }
  });
  return candidates;
}

function byRank(a: Candidate, b: Candidate): number {
  for (let i = 0; i < a.rank.length; i++) if (a.rank[i] !== b.rank[i]) return a.rank[i]! - b.rank[i]!;
  return 0;
}

/** Drafts wh-questions (or clozes) whose answers are dates, numbers and names of the evidence sentences. */
export class LocalQuestionGenerator implements QuestionGenerator {
  readonly name = 'local';

  async questions(input: GenerationInput): Promise<DraftQuestion[]> {
    const ranked = input.sentences.flatMap((_, evidence) => candidatesOf(input, evidence)).sort(byRank);
    const seen = new Set<string>();
    const unique = ranked.filter(({ draft }) => {
      const keys = [`q:${draft.question}`, `a:${draft.evidence[0]}:${normalizeAnswer(draft.answers[0]!)}`];
      if (keys.some((key) => seen.has(key))) return false;
      keys.forEach((key) => seen.add(key));
      return true;
    });
    const perSentence = new Map<number, number>();
    const spread = unique.filter(({ draft }) => {
      const count = perSentence.get(draft.evidence[0]!) ?? 0;
      perSentence.set(draft.evidence[0]!, count + 1);
      return count < MAX_PER_SENTENCE;
    });
    const chosen = [...spread, ...unique.filter((candidate) => !spread.includes(candidate))].slice(0, MAX_QUESTIONS);
    return chosen.map(({ draft }) => draft);
  }
}
