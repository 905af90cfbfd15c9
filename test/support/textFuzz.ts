/** Everything the answerers derive from a text, run on any text to show that none of it throws. */
import assert from 'node:assert/strict';
import { seededRandom } from '../../src/learning/random.js';
import { analyseQuestion, eventClause, questionNames, type QuestionAnalysis } from '../../src/qa/question.js';
import { bestSpan, MAX_PASSAGE_WORDS } from '../../src/qa/reader/spanReader.js';
import { questionFeatures, readerPassage, WORD_FEATURES, wordFeatures } from '../../src/qa/reader/wordFeatures.js';
import { roleAgreement } from '../../src/qa/roleAcronyms.js';
import { respell, SubjectIndex } from '../../src/qa/subjects.js';
import { typeMisfit } from '../../src/qa/typeMisfit.js';
import { readTimeScope } from '../../src/qa/timeScope.js';
import { nearness } from '../../src/qa/textAnchors.js';
import { mostAlike } from '../../src/qa/periodReading.js';
import { documentEvidence } from '../../src/qa/evidence.js';
import { EvidenceKind } from '../../src/qa/types.js';
import { contentTerms } from '../../src/text/language.js';
import { annotate, AnswerType, candidateSpans } from '../../src/text/annotation.js';
import { readEventTimes, type EventTime } from '../../src/text/eventTimes.js';

const random = seededRandom(7);
const SUBJECTS = new SubjectIndex(
  [
    'France',
    'Manchester United F.C.',
    'Speaker of the United States House of Representatives',
    'World Health Organization',
    '2030 Winter Olympics',
    'Ω ß İ',
  ].map((title) => ({ id: title, title })),
);

/** Everything the answerers derive from a question alone; returns what they read it as. */
export function readQuestion(question: string): QuestionAnalysis {
  const asked = analyseQuestion(question);
  questionNames(asked);
  readTimeScope(question, new Date('2025-01-15T00:00:00Z'));
  for (const acrossTypos of [true, false])
    for (const subject of SUBJECTS.link(question, { acrossTypos })) assert.ok(subject.coverage >= 0.5 && subject.coverage <= 1);
  const event = eventClause(question);
  if (event) assert.ok(question.includes(event.clause) && event.clause.trim() !== '', `event "${event.clause}" of "${question}"`);
  assert.equal(typeof respell(question, SUBJECTS.typos(question)), 'string');
  assert.ok(questionFeatures(asked).every(Number.isFinite));
  return asked;
}

/** Everything the answerers derive from a text with the question's help (the reader's scores drawn at random). */
export function readText(asked: QuestionAnalysis, text: string): void {
  annotate(text).forEach((sentence, s) => {
    for (const span of candidateSpans(sentence, s))
      assert.ok(span.start < span.end && span.end <= sentence.tokens.length, `span ${span.start}..${span.end} outside "${sentence.text}"`);
  });
  const question = asked.text;
  assert.ok(['names', 'contradicts', 'silent'].includes(roleAgreement(question, text, { title: text, words: [text.toLowerCase()] })));
  for (const type of [AnswerType.NAME, AnswerType.PLACE]) {
    const misfit = typeMisfit(type, question, text);
    assert.ok(misfit === null || misfit.startsWith(`"${question}"`));
  }
  const passage = readerPassage(text, MAX_PASSAGE_WORDS);
  const features = wordFeatures(asked, passage);
  assert.equal(features.length, passage.words.length * WORD_FEATURES.length);
  assert.ok(features.every(Number.isFinite), `non-finite word feature in "${text}"`);
  const scores = (): Float32Array => Float32Array.from(passage.words, () => random() * 20 - 10);
  const span = bestSpan(passage, scores(), scores());
  if (span) assert.ok(span.text !== '' && span.probability >= 0 && span.probability <= 1, `span "${span.text}" of "${text}"`);
  // The text as the reading dating a named value, and as a reading beside it.
  const time = { from: new Date('2005-01-01T00:00:00Z'), to: null, text: '', start: 0, end: 0 };
  const anchor = { side: 'after' as const, words: question, reading: { text, time, articleId: 'a' }, period: time };
  const reading = documentEvidence({ kind: EvidenceKind.PASSAGE, id: 'r', articleId: 'a', text, validFrom: time.from, validTo: null });
  const keys = nearness(anchor, contentTerms(question), { ...reading, statedTime: { ...time, sentence: text } }, span?.text ?? '');
  // The text as a passage of a page weighed against the question, beside one that shares its words.
  const alike = mostAlike(
    [
      { id: 'p', text },
      { id: 'q', text: question },
    ],
    contentTerms(question),
    5,
  );
  assert.ok(alike.length <= 2 && alike.every((unit) => unit.id === 'p' || unit.id === 'q'));
  assert.ok(
    keys.every((key) => !Number.isNaN(key)),
    `nearness of "${text}" is not a number`,
  );
}

/** Everything the answerers derive from a question and a text. */
export function readEverything(question: string, text: string): void {
  readText(readQuestion(question), text);
}

/** A sentence's event times, checked: words and offsets that match the sentence, a bound at least, and never an empty or reversed interval. */
export function checkedEventTimes(sentence: string): EventTime[] {
  const times = readEventTimes(sentence);
  for (const time of times) {
    assert.ok(0 <= time.start && time.start < time.end && time.end <= sentence.length, `offsets ${time.start}..${time.end} outside "${sentence}"`);
    assert.equal(time.text, sentence.slice(time.start, time.end));
    assert.ok(time.from !== null || time.to !== null, `"${time.text}" of "${sentence}" has neither bound`);
    for (const bound of [time.from, time.to]) assert.ok(bound === null || Number.isFinite(bound.getTime()), `"${time.text}": invalid date`);
    if (time.from && time.to) assert.ok(time.from < time.to, `"${time.text}" of "${sentence}" ends before it starts`);
  }
  return times;
}
