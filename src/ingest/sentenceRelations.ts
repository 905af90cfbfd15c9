/**
 * The relation between an old sentence and a new one (ENTAILMENT / CONTRADICTION / NEUTRAL),
 * predicted by the addon's Classifier from features computed here: embedding similarity, word
 * overlap, numbers, dates and names that differ (wink-nlp's entities and proper nouns),
 * negation, length and containment. No NLI model can be fetched here, so this small model,
 * trained on controlled edits of real sentences (`chronoql train-relations`), stands in for one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Classifier, type ClassifierModelJson } from '../native/index.js';
import { modelsDir } from '../platform/paths.js';
import { annotate, type AnnotatedSentence } from '../text/annotation.js';

export const RELATION_CLASSES = ['ENTAILMENT', 'CONTRADICTION', 'NEUTRAL'] as const;
export type Relation = (typeof RELATION_CLASSES)[number];

export const RELATION_FEATURES = [
  'similarity',
  'tokenJaccard',
  'newCoveredByOld',
  'oldCoveredByNew',
  'numbersOnlyInNew',
  'numbersOnlyInOld',
  'datesDiffer',
  'namesOnlyInNew',
  'namesOnlyInOld',
  'negationMismatch',
  'lengthRatio',
  'containment',
  'predicateOverlap',
  'entitiesDiffer',
  'tenseChanged',
] as const;

const NUMBER_WORDS = new Set(
  'one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion first second third fourth fifth'.split(' '),
);
/** Words that put a statement in the future: "will", "scheduled", "upcoming"; their coming or going revises the statement. */
const FUTURE = new Set(['will', 'scheduled', 'upcoming', 'expected', 'planned', 'due', 'shall']);
const NEGATIONS = new Set(['not', "n't", 'no', 'never', 'none', 'nor', 'without', 'neither', 'nobody', 'nothing']);
const isWord = (text: string): boolean => /[\p{L}\p{N}]/u.test(text);

interface SentenceFacts {
  words: string[];
  content: Set<string>;
  /** Content stems that are not names or numbers: what the sentence says about its entities. */
  predicate: Set<string>;
  numbers: Set<string>;
  dates: Set<string>;
  names: Set<string>;
  negations: number;
  future: boolean;
  normalized: string;
}

function facts(text: string): SentenceFacts {
  const sentences = annotate(text);
  const tokens = sentences.flatMap((sentence: AnnotatedSentence) => sentence.tokens);
  const dates = new Set<string>();
  for (const sentence of sentences) {
    for (const entity of sentence.entities) {
      if (entity.type === 'DATE' || entity.type === 'DURATION' || entity.type === 'TIME') dates.add(sentence.tokens.slice(entity.start, entity.end).map((t) => t.lower).join(' '));
    }
  }
  const names = new Set<string>();
  for (const sentence of sentences) {
    let run: string[] = [];
    sentence.tokens.forEach((token, i) => {
      const proper = token.pos === 'PROPN' || (i > 0 && /^\p{Lu}/u.test(token.text) && token.pos !== 'PUNCT');
      if (proper) run.push(token.lower);
      if (!proper || i === sentence.tokens.length - 1) {
        if (run.length > 0) names.add(run.join(' '));
        run = [];
      }
    });
  }
  const words = tokens.filter((token) => isWord(token.text)).map((token) => token.lower);
  return {
    words,
    content: new Set(tokens.filter((token) => isWord(token.text) && !token.stop).map((token) => token.stem)),
    predicate: new Set(tokens.filter((token) => isWord(token.text) && !token.stop && token.pos !== 'PROPN' && token.pos !== 'NUM' && !/\d/.test(token.text) && !NUMBER_WORDS.has(token.lower)).map((token) => token.stem)),
    numbers: new Set(tokens.filter((token) => /\d/.test(token.text) || NUMBER_WORDS.has(token.lower)).map((token) => token.lower)),
    dates,
    names,
    negations: tokens.filter((token) => NEGATIONS.has(token.lower)).length,
    future: tokens.some((token) => FUTURE.has(token.lower)),
    normalized: words.join(' '),
  };
}

const share = <T>(of: ReadonlySet<T>, within: ReadonlySet<T>): number => {
  if (of.size === 0) return 1;
  let held = 0;
  for (const item of of) if (within.has(item)) held++;
  return held / of.size;
};
const onlyIn = <T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number => Math.min(3, [...a].filter((item) => !b.has(item)).length) / 3;

function jaccard<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  const union = new Set([...a, ...b]);
  if (union.size === 0) return 0;
  let shared = 0;
  for (const item of a) if (b.has(item)) shared++;
  return shared / union.size;
}

/** The feature row of an (old, new) pair, in RELATION_FEATURES order; `similarity` is the encoders' cosine. */
export function relationFeatures(oldText: string, newText: string, similarity: number): number[] {
  const o = facts(oldText);
  const n = facts(newText);
  return [
    similarity,
    jaccard(new Set(o.words), new Set(n.words)),
    share(n.content, o.content),
    share(o.content, n.content),
    onlyIn(n.numbers, o.numbers),
    onlyIn(o.numbers, n.numbers),
    o.dates.size > 0 && n.dates.size > 0 && [...n.dates].some((date) => !o.dates.has(date)) ? 1 : 0,
    onlyIn(n.names, o.names),
    onlyIn(o.names, n.names),
    o.negations % 2 !== n.negations % 2 ? 1 : 0,
    Math.min(o.words.length, n.words.length) / Math.max(1, o.words.length, n.words.length),
    o.normalized !== '' && n.normalized !== '' && (n.normalized.includes(o.normalized) || o.normalized.includes(n.normalized)) ? 1 : 0,
    jaccard(o.predicate, n.predicate),
    [...n.names].some((x) => !o.names.has(x)) || [...n.numbers].some((x) => !o.numbers.has(x)) || [...n.dates].some((x) => !o.dates.has(x)) ? 1 : 0,
    o.future !== n.future ? 1 : 0,
  ];
}

export const DEFAULT_RELATIONS_PATH = (): string => join(modelsDir(), 'sentence-relations.json');

export class RelationClassifier {
  private constructor(private readonly classifier: Classifier) {}

  static fromModel(model: ClassifierModelJson): RelationClassifier {
    const classifier = Classifier.fromJson(model);
    if (classifier.features.join() !== RELATION_FEATURES.join() || classifier.classes.join() !== RELATION_CLASSES.join()) {
      throw new RangeError(`sentence relation model must have features [${RELATION_FEATURES.join(', ')}] and classes [${RELATION_CLASSES.join(', ')}]`);
    }
    return new RelationClassifier(classifier);
  }

  static load(path = DEFAULT_RELATIONS_PATH()): RelationClassifier {
    return RelationClassifier.fromModel(JSON.parse(readFileSync(path, 'utf8')) as ClassifierModelJson);
  }

  /** Class probabilities of many pairs in one native call. */
  async predict(rows: readonly number[][]): Promise<Array<Record<Relation, number>>> {
    if (rows.length === 0) return [];
    const p = await this.classifier.scoreBatch(rows);
    return rows.map((_, r) => ({ ENTAILMENT: p[3 * r]!, CONTRADICTION: p[3 * r + 1]!, NEUTRAL: p[3 * r + 2]! }));
  }
}
