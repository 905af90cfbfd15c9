/**
 * What the reader knows about each word of a passage besides its contextual state: how it
 * matches the question (the word, its stem, bigrams, rarity, distance, its sentence's overlap:
 * the lexical evidence of the SQuAD logistic-regression baseline, per word) and what kind of
 * word it is (part of speech, entity, shape). Pure and total: any text gives finite features.
 */
import { annotate, AnswerType, type AnnotatedSentence, type Token } from '../../text/annotation.js';
import type { QuestionAnalysis } from '../question.js';

const UNIVERSAL_POS = [
  'ADJ',
  'ADP',
  'ADV',
  'AUX',
  'CCONJ',
  'DET',
  'INTJ',
  'NOUN',
  'NUM',
  'PART',
  'PRON',
  'PROPN',
  'PUNCT',
  'SCONJ',
  'SYM',
  'VERB',
  'X',
] as const;
const DATE_ENTITIES = new Set(['DATE', 'TIME', 'DURATION']);
const NUMBER_ENTITIES = new Set(['CARDINAL', 'ORDINAL', 'MONEY', 'PERCENT']);

export const WORD_FEATURES = [
  'sameWord',
  'sameStem',
  'rareStem',
  'sharedBigram',
  'nearMatch',
  'sentenceOverlap',
  'sentenceRareOverlap',
  'bestSentence',
  'stopWord',
  'punctuation',
  'capitalised',
  'hasDigit',
  'sentenceStart',
  'repeated',
  ...UNIVERSAL_POS.map((pos) => `pos${pos}`),
  'dateEntity',
  'numberEntity',
  'entityStart',
] as const;

const WH_FORMS: ReadonlyArray<[string, RegExp]> = [
  ['who', /\b(who|whom|whose)\b/],
  ['what', /\bwhat\b/],
  ['which', /\bwhich\b/],
  ['when', /\bwhen\b/],
  ['where', /\bwhere\b/],
  ['why', /\bwhy\b/],
  ['howMany', /\bhow (many|much)\b/],
  ['how', /\bhow\b/],
];
const ANSWER_TYPES = Object.values(AnswerType);

export const QUESTION_FEATURES = [...ANSWER_TYPES.map((type) => `asks${type}`), ...WH_FORMS.map(([name]) => `wh_${name}`)] as const;

/** A passage as the reader sees it: its words in order, each with its sentence. */
export interface ReaderPassage {
  sentences: AnnotatedSentence[];
  words: Token[];
  /** Sentence of each word. */
  sentenceOf: Int32Array;
  /** Index of each word inside its sentence. */
  positionOf: Int32Array;
}

/** The passage's words, at most `maxWords` (the rest is not read). */
export function readerPassage(text: string, maxWords: number): ReaderPassage {
  const sentences: AnnotatedSentence[] = [];
  const words: Token[] = [];
  const sentenceOf: number[] = [];
  const positionOf: number[] = [];
  for (const sentence of annotate(text)) {
    if (words.length >= maxWords) break;
    const kept = sentence.tokens.slice(0, maxWords - words.length);
    sentences.push(
      kept.length === sentence.tokens.length ? sentence : { ...sentence, tokens: kept, entities: sentence.entities.filter((e) => e.end <= kept.length) },
    );
    kept.forEach((token, i) => {
      words.push(token);
      sentenceOf.push(sentences.length - 1);
      positionOf.push(i);
    });
  }
  return { sentences, words, sentenceOf: Int32Array.from(sentenceOf), positionOf: Int32Array.from(positionOf) };
}

const isWord = (token: Token): boolean => /[\p{L}\p{N}]/u.test(token.text);

/** The word features of every word of `passage` for `question`, row-major (words × WORD_FEATURES). */
export function wordFeatures(question: QuestionAnalysis, passage: ReaderPassage): Float32Array {
  const width = WORD_FEATURES.length;
  const out = new Float32Array(passage.words.length * width);
  const questionWords = new Set(question.tokens.filter(isWord).map((token) => token.lower));
  const questionStems = question.tokens.filter(isWord).map((token) => token.stem);
  const questionBigrams = new Set(questionStems.slice(1).map((stem, i) => `${questionStems[i]} ${stem}`));
  // Rarer stems of the passage say more (inverse sentence frequency), as in the baseline's weighted matches.
  const sentenceFrequency = new Map<string, number>();
  for (const sentence of passage.sentences)
    for (const stem of new Set(sentence.tokens.map((t) => t.stem))) sentenceFrequency.set(stem, (sentenceFrequency.get(stem) ?? 0) + 1);
  const rarity = (stem: string): number => Math.log(1 + passage.sentences.length / (sentenceFrequency.get(stem) ?? 0.5));
  let questionWeight = 0;
  for (const term of question.terms) questionWeight += rarity(term);
  const wordCounts = new Map<string, number>();
  for (const word of passage.words) wordCounts.set(word.lower, (wordCounts.get(word.lower) ?? 0) + 1);

  const overlap = passage.sentences.map((sentence) => {
    const stems = new Set(sentence.tokens.map((t) => t.stem));
    let held = 0;
    let weight = 0;
    for (const term of question.terms) {
      if (!stems.has(term)) continue;
      held++;
      weight += rarity(term);
    }
    return { share: question.terms.size === 0 ? 0 : held / question.terms.size, weighted: questionWeight === 0 ? 0 : weight / questionWeight };
  });
  const best = Math.max(0, ...overlap.map((o) => o.share));
  const entityAt = passage.sentences.map((sentence) => {
    const kinds = new Array<{ type: string; start: boolean } | undefined>(sentence.tokens.length);
    for (const entity of sentence.entities)
      for (let t = entity.start; t < entity.end && t < kinds.length; t++) kinds[t] = { type: entity.type, start: t === entity.start };
    return kinds;
  });
  const matched = passage.words.map((word) => isWord(word) && question.terms.has(word.stem));

  passage.words.forEach((word, w) => {
    const s = passage.sentenceOf[w]!;
    const sentence = passage.sentences[s]!;
    const position = passage.positionOf[w]!;
    let nearest = Infinity;
    for (let i = 0; i < sentence.tokens.length; i++) {
      if (i !== position && matched[w - position + i]) nearest = Math.min(nearest, Math.abs(i - position));
    }
    const previous = sentence.tokens[position - 1];
    const next = sentence.tokens[position + 1];
    const entity = entityAt[s]![position];
    const row = [
      isWord(word) && questionWords.has(word.lower) ? 1 : 0,
      matched[w] ? 1 : 0,
      matched[w] ? rarity(word.stem) / Math.log(1 + passage.sentences.length / 0.5) : 0,
      (previous && questionBigrams.has(`${previous.stem} ${word.stem}`)) || (next && questionBigrams.has(`${word.stem} ${next.stem}`)) ? 1 : 0,
      nearest === Infinity ? 0 : 1 / (1 + nearest),
      overlap[s]!.share,
      overlap[s]!.weighted,
      best > 0 && overlap[s]!.share === best ? 1 : 0,
      word.stop ? 1 : 0,
      isWord(word) ? 0 : 1,
      /^\p{Lu}/u.test(word.text) ? 1 : 0,
      /\p{N}/u.test(word.text) ? 1 : 0,
      position === 0 ? 1 : 0,
      Math.min(1, ((wordCounts.get(word.lower) ?? 1) - 1) / 4),
      ...UNIVERSAL_POS.map((pos) => (word.pos === pos ? 1 : 0)),
      entity && DATE_ENTITIES.has(entity.type) ? 1 : 0,
      entity && NUMBER_ENTITIES.has(entity.type) ? 1 : 0,
      entity?.start ? 1 : 0,
    ];
    out.set(row, w * width);
  });
  return out;
}

/** What the question asks for: its expected answer type and its wh-form. */
export function questionFeatures(question: QuestionAnalysis): Float32Array {
  const lower = question.text.toLowerCase();
  // The earliest wh-word decides ("What is the name of the man who…" is a what-question); "how many" before "how".
  let form: string | undefined;
  let at = Infinity;
  for (const [name, pattern] of WH_FORMS) {
    const index = pattern.exec(lower)?.index ?? Infinity;
    if (index < at) [form, at] = [name, index];
  }
  return Float32Array.from([...ANSWER_TYPES.map((type) => (question.answerType === type ? 1 : 0)), ...WH_FORMS.map(([name]) => (name === form ? 1 : 0))]);
}
