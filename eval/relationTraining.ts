/**
 * Training pairs for the sentence relation classifier, made by controlled edits of real
 * sentences (GrowOVER's relation categories):
 * - CONTRADICTION: a name, number or date replaced by another of its kind from the corpus (or a
 *   name and a date together, or a name with the predecessor named), or a negation added;
 * - ENTAILMENT: a trailing or subordinate clause dropped, a parenthetical initialism added, two
 *   clauses swapped, or a typo fixed;
 * - NEUTRAL: another sentence of the same article.
 * Deterministic for a given corpus and seed.
 */
import { trainSoftmaxRegression } from '../src/learning/softmaxRegression.js';
import type { ClassifierModelJson } from '../src/native/index.js';
import { seededRandom } from '../src/learning/random.js';
import { rowDot } from '../src/embedding/vectors.js';
import { annotate, type Token } from '../src/text/annotation.js';
import type { EmbedTexts } from '../src/ingest/growoverLabeler.js';
import { RELATION_CLASSES, RELATION_FEATURES, relationFeatures, type Relation } from '../src/ingest/sentenceRelations.js';

export interface RelationPair {
  old: string;
  new: string;
  relation: Relation;
  edit: string;
}

const SUBORDINATE = /,\s(which|who|where|when|while|although|after|before|including|following|making|becoming|succeeding|with)\b[^,]*(?=[,.]|$)/;

const tokensOf = (sentence: string): Token[] => annotate(sentence).flatMap((s) => s.tokens);

function properRuns(sentence: string): string[] {
  const found: string[] = [];
  let run: string[] = [];
  for (const token of [...tokensOf(sentence), { text: '', pos: 'END' }]) {
    if (token.pos === 'PROPN') run.push(token.text);
    else {
      if (run.length > 0) found.push(run.join(' '));
      run = [];
    }
  }
  return found.filter((name) => sentence.includes(name) && !MONTHS.test(name));
}

const MONTHS = /^(January|February|March|April|May|June|July|August|September|October|November|December)$/;

function dates(sentence: string): string[] {
  return annotate(sentence)
    .flatMap((s) =>
      s.entities
        .filter((e) => e.type === 'DATE')
        .map((e) =>
          s.tokens
            .slice(e.start, e.end)
            .map((t, i) => (i === 0 ? t.text : t.space + t.text))
            .join(''),
        ),
    )
    .filter((date) => sentence.includes(date) && /\d/.test(date));
}

/** Every kind of controlled edit that applies to one sentence, as (old, new, relation) pairs. */
export function controlledEdits(
  sentence: string,
  article: readonly string[],
  pools: { names: string[]; dates: string[] },
  random: () => number,
): RelationPair[] {
  const pick = <T>(items: readonly T[]): T | undefined => (items.length === 0 ? undefined : items[Math.floor(random() * items.length)]);
  const pairs: RelationPair[] = [];
  const name = pick(properRuns(sentence));
  const otherName = pick(pools.names.filter((n) => n !== name && !sentence.includes(n)));
  if (name && otherName) pairs.push({ old: sentence, new: sentence.replace(name, otherName), relation: 'CONTRADICTION', edit: 'name replaced' });
  const number = pick([...sentence.matchAll(/\b\d+(?:[.,]\d+)?\b/g)].map((m) => m[0]));
  if (number) {
    const value = Number(number.replace(',', ''));
    const changed = Number.isInteger(value) ? String(value + 1 + Math.floor(random() * 9)) : (value * (1.1 + random())).toFixed(2);
    pairs.push({ old: sentence, new: sentence.replace(number, changed), relation: 'CONTRADICTION', edit: 'number changed' });
  }
  const date = pick(dates(sentence));
  const otherDate = pick(pools.dates.filter((d) => d !== date));
  if (date && otherDate) pairs.push({ old: sentence, new: sentence.replace(date, otherDate), relation: 'CONTRADICTION', edit: 'date replaced' });
  // Real revisions change several things at once: the holder and the date, and often say whom they succeeded.
  if (name && otherName && date && otherDate) {
    pairs.push({ old: sentence, new: sentence.replace(name, otherName).replace(date, otherDate), relation: 'CONTRADICTION', edit: 'name and date replaced' });
  }
  if (name && otherName) {
    const successor = sentence.replace(name, otherName).replace(/\.$/, `, succeeding ${name}.`);
    pairs.push({
      old: sentence,
      new: date && otherDate ? successor.replace(date, otherDate) : successor,
      relation: 'CONTRADICTION',
      edit: 'new holder, predecessor named',
    });
  }
  // A revision also rewords: a noun of the sentence swapped for another noun of the article.
  const nouns = (text: string): string[] =>
    tokensOf(text)
      .filter((t) => t.pos === 'NOUN' && /^[a-z]{4,}$/.test(t.text))
      .map((t) => t.text);
  const noun = pick(nouns(sentence));
  const otherNoun = pick(article.flatMap(nouns).filter((n) => n !== noun));
  if (noun && otherNoun && (date || number) && (otherDate || number)) {
    const reworded = sentence.replace(new RegExp(`\\b${noun}\\b`), otherNoun);
    const changed = date && otherDate ? reworded.replace(date, otherDate) : reworded.replace(number!, String(Number(number!.replace(',', '')) + 2));
    if (changed !== reworded) pairs.push({ old: sentence, new: changed, relation: 'CONTRADICTION', edit: 'reworded with a new value' });
  }
  // A plan that came to pass (or a statement put back into the future) revises the sentence.
  const past = sentence
    .replace(/\bwill be\b/, 'was')
    .replace(/\bis scheduled to\b/, 'went on to')
    .replace(/\bis expected to\b/, 'went on to');
  if (past !== sentence) pairs.push({ old: sentence, new: past, relation: 'CONTRADICTION', edit: 'plan came to pass' });
  const negated = sentence.replace(/\b(is|was|are|were|has|have|had|will|can)\b/, '$1 not');
  if (negated !== sentence) pairs.push({ old: sentence, new: negated, relation: 'CONTRADICTION', edit: 'negation added' });

  const clause = SUBORDINATE.exec(sentence);
  if (clause) pairs.push({ old: sentence, new: sentence.replace(clause[0], '').replace(/([^.])$/, '$1.'), relation: 'ENTAILMENT', edit: 'clause dropped' });
  const longName = properRuns(sentence).find((n) => n.split(' ').length >= 2);
  if (longName) {
    const initials = longName
      .split(' ')
      .map((w) => w[0])
      .join('')
      .toUpperCase();
    pairs.push({ old: sentence, new: sentence.replace(longName, `${longName} (${initials})`), relation: 'ENTAILMENT', edit: 'parenthetical added' });
  }
  const clauses = sentence.replace(/\.$/, '').split(/,\s(?:and|but)\s/);
  if (clauses.length === 2 && clauses.every((c) => c.split(' ').length >= 4)) {
    const [a, b] = clauses as [string, string];
    pairs.push({
      old: sentence,
      new: `${b.charAt(0).toUpperCase()}${b.slice(1)}, and ${a.charAt(0).toLowerCase()}${a.slice(1)}.`,
      relation: 'ENTAILMENT',
      edit: 'clauses reordered',
    });
  }
  const word = pick(sentence.split(' ').filter((w) => /^[a-z]{6,}$/.test(w)));
  if (word) {
    const i = 1 + Math.floor(random() * (word.length - 2));
    const typo = word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
    pairs.push({ old: sentence.replace(word, typo), new: sentence, relation: 'ENTAILMENT', edit: 'typo fixed' });
  }
  const other = pick(article.filter((s) => s !== sentence));
  if (other) pairs.push({ old: sentence, new: other, relation: 'NEUTRAL', edit: 'another sentence of the article' });
  return pairs;
}

/** Pairs for every sentence of every article (articles given as their sentences). */
export function relationTrainingPairs(articles: ReadonlyArray<readonly string[]>, seed = 17): RelationPair[] {
  const random = seededRandom(seed);
  const pools = {
    names: [...new Set(articles.flatMap((a) => a.flatMap(properRuns)))].sort(),
    dates: [...new Set(articles.flatMap((a) => a.flatMap(dates)))].sort(),
  };
  return articles.flatMap((sentences) => sentences.flatMap((sentence) => controlledEdits(sentence, sentences, pools, random)));
}

/** Embeds each pair, computes its features and trains the 3-way classifier. */
export async function trainRelationClassifier(
  pairs: readonly RelationPair[],
  embed: EmbedTexts,
): Promise<{ model: ClassifierModelJson; loss: number; counts: Record<Relation, number> }> {
  const rows: number[][] = [];
  for (let start = 0; start < pairs.length; start += 256) {
    const batch = pairs.slice(start, start + 256);
    const { vectors, dimension } = await embed(batch.flatMap((pair) => [pair.old, pair.new]));
    batch.forEach((pair, i) => {
      rows.push(relationFeatures(pair.old, pair.new, rowDot(vectors, 2 * i, vectors, 2 * i + 1, dimension)));
    });
  }
  const { model, loss } = trainSoftmaxRegression(
    rows.map((features, i) => ({ features, label: RELATION_CLASSES.indexOf(pairs[i]!.relation) })),
    { classes: RELATION_CLASSES, features: RELATION_FEATURES, balanceClasses: true, iterations: 300, l2: 1e-2 },
  );
  const counts = { ENTAILMENT: 0, CONTRADICTION: 0, NEUTRAL: 0 };
  for (const pair of pairs) counts[pair.relation]++;
  return { model, loss, counts };
}
