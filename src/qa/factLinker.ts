/**
 * Finds the fact a question asks for by meaning: every attribute of the articles the question
 * names is read as "<attribute> of <title>" and compared with the question by the reader's
 * encoder ("Who coaches Liverpool?" is close to "Head coach of Liverpool F.C."), together with
 * the words they share and how fully the question names the article.
 */
import { LRUCache } from 'lru-cache';
import { FactChangeKind, type FactRecord } from '../domain/model.js';
import { isValidAt } from '../domain/time.js';
import { rowDot } from '../embedding/vectors.js';
import { contentTerms } from '../text/language.js';
import { holdsWords, nameWords, normalizeAnswer, spacedWords } from '../text/normalize.js';
import type { NamedNeighbour } from './question.js';
import { roleAgreement } from './roleAcronyms.js';
import type { LinkedSubject } from './subjects.js';

export interface FactMatch {
  fact: FactRecord;
  subject: LinkedSubject;
  /** Encoder similarity of the question and "<attribute> of <title>" (cosine). */
  similarity: number;
  /** How far it stands above the best other attribute of the linked articles. */
  margin: number;
  /** Share of the attribute's content words the question holds. */
  wordOverlap: number;
  score: number;
}

/**
 * How the parts weigh and where a match starts, chosen on the tune half of the plain demo
 * questions (data/eval/plain-questions-tune.jsonl): a shared attribute word counts 0.03 of
 * similarity, a title the question names only by half its words costs 0.02 (one it does not name
 * at all, 0.04). The best attribute was right for 72 of the 75 questions an infobox value answers;
 * the threshold lets a few wrong ones through, for the certainty gate to weigh.
 */
export const FACT_LINKING = { wordOverlapWeight: 0.03, coverageWeight: 0.04, minScore: 0.86 } as const;

/** The attribute names of the whole store, which tell an attribute a subject lacks from another name of one it has. */
export interface AttributeVocabulary {
  names(): readonly string[];
  /** Whether some article has had facts of both: then they are two attributes (Chairman, CEO), not two names of one (Manager, Head coach). */
  heldTogether(first: string, second: string): Promise<boolean>;
}

export type SentenceEmbedder = (texts: readonly string[]) => Promise<Float32Array>;

export class FactLinker {
  private readonly templates = new LRUCache<string, Float32Array>({ max: 100_000 });

  private readonly attributeTerms = new LRUCache<string, Set<string>>({ max: 10_000, memoMethod: (attribute) => contentTerms(attribute) });
  /** Each attribute name of the store normalised once: every match reads all of them, and a store may have thousands. */
  private readonly attributeWords = new LRUCache<string, string>({ max: 100_000, memoMethod: (name) => normalizeAnswer(name) });

  constructor(
    private readonly embed: SentenceEmbedder,
    readonly dimension: number,
    private readonly vocabulary: AttributeVocabulary = { names: () => [], heldTogether: async () => false },
  ) {}

  /**
   * The best (article, attribute) among the candidates' facts (each valid at the asked time), or
   * null when none reaches FACT_LINKING.minScore, or when the question names a role that the
   * nearest attribute is not and no attribute is (roleAcronyms.ts: the CFO of a subject with only
   * a CEO, the foreign minister of one with only a finance minister), or when it asks for an
   * attribute the candidates lack (asksForAbsent).
   */
  async match(
    question: { text: string; vector: Float32Array; terms: ReadonlySet<string> },
    candidates: ReadonlyArray<{ subject: LinkedSubject; facts: readonly FactRecord[] }>,
  ): Promise<FactMatch | null> {
    const pairs = candidates.flatMap(({ subject, facts }) => facts.map((fact) => ({ subject, fact, text: `${fact.attribute} of ${subject.title}` })));
    if (pairs.length === 0) return null;
    const vectors = await this.vectors(pairs.map((pair) => pair.text));
    const scored = pairs.map((pair, i) => {
      const similarity = rowDot(question.vector, 0, vectors[i]!, 0, this.dimension);
      const attribute = this.attributeTerms.memo(pair.fact.attribute);
      const wordOverlap = attribute.size === 0 ? 0 : [...attribute].filter((term) => question.terms.has(term)).length / attribute.size;
      const score = similarity + FACT_LINKING.wordOverlapWeight * wordOverlap + FACT_LINKING.coverageWeight * (pair.subject.coverage - 1);
      return { ...pair, similarity, wordOverlap, score, agreement: roleAgreement(question.text, pair.fact.attribute, pair.subject) };
    });
    scored.sort((a, b) => b.score - a.score);
    let kept = scored.filter((pair) => pair.agreement !== 'contradicts');
    // Where the nearest attribute is another role of the asked one's shape, only the asked role itself will do.
    if (scored[0]?.agreement === 'contradicts') kept = kept.filter((pair) => pair.agreement === 'names');
    const best = kept[0];
    if (!best || best.score < FACT_LINKING.minScore || (await this.asksForAbsent(question, best, candidates))) return null;
    const second = scored.find((pair) => pair !== best);
    return {
      fact: best.fact,
      subject: best.subject,
      similarity: best.similarity,
      margin: best.score - (second?.score ?? best.score - 1),
      wordOverlap: best.wordOverlap,
      score: best.score,
    };
  }

  /**
   * Whether the question asks for an attribute that other articles of the store have and the
   * candidates lack ("Who is Starbucks' chairman?", where Boeing has a Chairman and Starbucks only a
   * CEO): one it names word for word, none of whose words a candidate's attribute or the subject's
   * name holds, which fits the question better as "<attribute> of <title>" than the best match does,
   * and which some article has beside the best match's attribute (Liverpool's Head coach is what
   * Manchester United calls its Manager: no article has both).
   */
  private async asksForAbsent(
    question: { text: string; vector: Float32Array },
    best: { subject: LinkedSubject; fact: FactRecord; score: number },
    candidates: ReadonlyArray<{ facts: readonly FactRecord[] }>,
  ): Promise<boolean> {
    const owned = [...new Set(candidates.flatMap(({ facts }) => facts.flatMap((fact) => [...this.attributeTerms.memo(fact.attribute)])))];
    // "Chair" is the Chairman's word.
    const isOwned = (term: string): boolean => owned.some((other) => other.startsWith(term) || term.startsWith(other));
    const naming = contentTerms(best.subject.words.join(' '));
    const said = spacedWords(question.text);
    const absent = this.vocabulary.names().filter((name) => {
      const words = this.attributeWords.memo(name);
      // Word for word, or its plural: "captain", "chairman", but not "chaired" for Chair.
      if (!words || !(holdsWords(said, words) || holdsWords(said, `${words}s`))) return false;
      const terms = [...this.attributeTerms.memo(name)];
      return terms.length > 0 && terms.every((term) => !isOwned(term) && !naming.has(term));
    });
    if (absent.length === 0) return false;
    const vectors = await this.vectors(absent.map((name) => `${name} of ${best.subject.title}`));
    const fitOf = (vector: Float32Array): number =>
      rowDot(question.vector, 0, vector, 0, this.dimension) + FACT_LINKING.wordOverlapWeight + FACT_LINKING.coverageWeight * (best.subject.coverage - 1);
    for (const [index, name] of absent.entries()) {
      if (fitOf(vectors[index]!) > best.score && (await this.vocabulary.heldTogether(name, best.fact.attribute))) return true;
    }
    return false;
  }

  private async vectors(texts: readonly string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((text) => !this.templates.has(text)))];
    if (missing.length > 0) {
      const embedded = await this.embed(missing);
      missing.forEach((text, i) => this.templates.set(text, embedded.slice(i * this.dimension, (i + 1) * this.dimension)));
    }
    return texts.map((text) => this.templates.get(text)!);
  }
}

/** The values an attribute had before `fact` held it, up to `instant` (its outdated versions). */
export function formerValues(versions: readonly FactRecord[], fact: FactRecord, instant: Date): string[] {
  return versions
    .filter((other) => other.attribute === fact.attribute && other.validTo !== null && other.validTo <= instant && other.value !== fact.value)
    .map((other) => other.value);
}

/** Whether a value is the named one: every word of the one in the other ("Klopp", "Jürgen Klopp"). */
export function namesValue(value: string, name: string): boolean {
  const [valueWords, nameWordSet] = [new Set(nameWords(value)), new Set(nameWords(name))];
  const within = (inner: Set<string>, outer: Set<string>): boolean => inner.size > 0 && [...inner].every((word) => outer.has(word));
  return within(nameWordSet, valueWords) || within(valueWords, nameWordSet);
}

/**
 * The version of `fact`'s attribute beside the value a question names, among those known at
 * `instant`: for "before Donald Tusk", the last one before the first version naming him; for
 * "after Rishi Sunak", the first one after the last version naming him. A REFINED version (the
 * same value reworded) is no step of its own. Null when the store knows the named value but
 * nothing on that side of it; undefined when no version names it.
 */
export function neighbourOfNamed(versions: readonly FactRecord[], fact: FactRecord, neighbour: NamedNeighbour, instant: Date): FactRecord | null | undefined {
  const history = versions
    .filter((other) => other.attribute === fact.attribute && other.validFrom <= instant)
    .sort((a, b) => a.validFrom.getTime() - b.validFrom.getTime());
  const named = history.map((version) => namesValue(version.value, neighbour.name));
  if (!named.includes(true)) return undefined;
  const refined = (index: number): boolean => history[index]?.change === FactChangeKind.REFINED;
  let index: number;
  if (neighbour.side === 'before') {
    index = named.indexOf(true) - 1;
    while (index >= 0 && refined(index + 1)) index -= 1;
  } else {
    index = named.lastIndexOf(true) + 1;
    while (index < history.length && refined(index)) index += 1;
  }
  return history[index] ?? null;
}

/**
 * The value `fact`'s attribute had at the end of a past year the question names as an event ("the
 * 2023 final"), when it differs from `fact`'s: the current Champion is not the winner of the 2023
 * final. Null when no such year is named, or the store has no other value for it then.
 */
export function valueOfNamedYear(
  versions: readonly FactRecord[],
  fact: FactRecord,
  years: readonly number[],
  instant: Date,
): { year: number; value: string } | null {
  for (const year of years) {
    const end = new Date(Date.UTC(year + 1, 0, 1) - 1);
    if (end >= instant) continue;
    const then = versions.find((other) => other.attribute === fact.attribute && isValidAt(other, end));
    if (then && then.value !== fact.value) return { year, value: then.value };
  }
  return null;
}
