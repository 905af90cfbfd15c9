/**
 * A name's type as its evidence uses it. The span annotator types every capitalised run as a
 * person, an organisation or a place alike, so "Manchester City won the 2023 final in Istanbul"
 * answered "Who did Manchester City beat?" with "Istanbul", adopted at 0.95 (issue 32). The word
 * before a name tells more: of 1,480 capitalised SQuAD training answers to who-questions, one
 * stands right after "in" wherever its text names it (0 of 487 in the SQuAD evaluation set, 1 of
 * 138 in TimeQA's), against 136 of 421 answers to where-questions; and of those where-answers
 * 2 stand only after "by", against 228 who-answers.
 * A date is no name or place at all: "Who founded Boeing?" was answered with its Founded fact,
 * "15 July 1916", adopted at 0.98 (the founders are a fact beside it).
 */
import { AnswerType } from '../text/annotation.js';
import { statedPeriods } from '../text/timeExpressions.js';

/** The word before a name that makes it another type than the one asked, and what it then is. */
const MISREAD: Partial<Record<AnswerType, { before: string; reads: string }>> = {
  [AnswerType.NAME]: { before: 'in', reads: 'a place or a time' },
  [AnswerType.PLACE]: { before: 'by', reads: 'who did something' },
};

/**
 * Why `answer` is not what a question of `type` asks for, when every mention of it in `evidence`
 * follows the word that makes it another type ("in Istanbul" for who); null when it may be.
 */
export function typeMisfit(type: AnswerType, answer: string, evidence: string): string | null {
  if ((type === AnswerType.NAME || type === AnswerType.PLACE) && isOnlyATime(answer)) return `"${answer}" is a time, which is not what the question asks`;
  const misread = MISREAD[type];
  if (!misread || !/^\p{Lu}/u.test(answer)) return null;
  let mentions = 0;
  for (let at = evidence.indexOf(answer); at >= 0; at = evidence.indexOf(answer, at + 1)) {
    const end = at + answer.length;
    // Inside a longer word, or a possessive, which names its owner ("in James Cameron's film"): no mention of the type.
    if (/^[\p{L}\p{N}]|^['’]s\b/u.test(evidence.slice(end, end + 3))) continue;
    mentions++;
    const previous = /(\S+)\s*$/u.exec(evidence.slice(Math.max(0, at - 40), at))?.[1];
    if (previous?.toLowerCase() !== misread.before) return null;
  }
  if (mentions === 0) return null;
  return `"${answer}" reads as ${misread.reads} ("${misread.before} ${answer}"), which is not what the question asks`;
}

/** Whether the whole answer is one stated time with its year ("15 July 1916", "December 2015"; "May" may be Theresa May). */
function isOnlyATime(answer: string): boolean {
  const text = answer.trim();
  const periods = statedPeriods(text, NO_REFERENCE);
  return periods.length === 1 && !periods[0]!.yearImplied && periods[0]!.start === 0 && periods[0]!.end >= text.replace(/[.,;]+$/u, '').length;
}

/** The reference for relative times, which do not matter here: only whether the words are a time. */
const NO_REFERENCE = new Date(0);
