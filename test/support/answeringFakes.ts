/**
 * In-memory stand-ins for what answering needs (src/qa/ports.ts), so each stage of `ask` and
 * `ask` as a whole run in milliseconds without Neo4j, ONNX or the addon. A world is a few
 * articles with dated facts and passages; search ranks passages by shared words, the encoder
 * hashes words into a vector, the generator reads "<X> is/was <Name>" from a passage and the
 * value of a fact, and the gate's p(reliable) is a function of the named gate features.
 */
import { GATE_FEATURES } from '../../src/qa/certaintyGate.js';
import type { FactRecord, SentenceRecord, SnapshotRecord } from '../../src/domain/model.js';
import { FactChangeKind, SnapshotStatus } from '../../src/domain/model.js';
import { isValidAt } from '../../src/domain/time.js';
import type { ChangeProfile } from '../../src/graph/answeringRepository.js';
import type { UnitRecord } from '../../src/graph/retrievalRepository.js';
import type { ReRetrievalRequest } from '../../src/retrieval/denseRetriever.js';
import { SearchUnit, type SearchHit, type SearchOptions } from '../../src/retrieval/retriever.js';
import type { Generation, GenerationInput, Generator } from '../../src/qa/generators/types.js';
import type { AnsweringPorts, Gate } from '../../src/qa/ports.js';
import type { EventTime } from '../../src/domain/model.js';
import type { TimeReader } from '../../src/qa/textTime.js';
import type { QuestionAnalysis } from '../../src/qa/question.js';
import { EvidenceKind, type Certainty, type Evidence } from '../../src/qa/types.js';
import { contentTerms } from '../../src/text/language.js';

export interface FakeArticle {
  id: string;
  facts?: Array<{ attribute: string; value: string; from: string; to?: string; change?: FactChangeKind }>;
  passages?: Array<{ text: string; from: string; to?: string }>;
}

export interface FakeWorld {
  /** Snapshot dates, oldest first (YYYY-MM-DD). */
  snapshots: string[];
  articles: FakeArticle[];
}

/** A store of one snapshot holding one page of passages. */
export function onePageWorld(id: string, passages: readonly string[], snapshot = '2021-06-01'): FakeWorld {
  return { snapshots: [snapshot], articles: [{ id, passages: passages.map((text) => ({ text, from: snapshot })) }] };
}

const day = (iso: string): Date => new Date(`${iso}T00:00:00.000Z`);
const DIMENSION = 64;

function hashedVector(text: string): Float32Array {
  const vector = new Float32Array(DIMENSION);
  for (const term of contentTerms(text)) {
    let hash = 0;
    for (const char of term) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    vector[hash % DIMENSION]! += 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

function overlap(query: string, text: string): number {
  const words = contentTerms(text);
  return [...contentTerms(query)].filter((term) => words.has(term)).length;
}

/** The gate of the fakes: p(reliable) from the candidate's named features (the certainty gate's, or `features`), the rest split evenly. */
export function fakeGate(
  reliability: (features: Record<string, number>) => number,
  adoptAt = { fact: 0.5, text: 0.5 },
  lambda = 2,
  features: readonly string[] = GATE_FEATURES,
): Gate {
  return {
    lambda,
    score: async (rows) =>
      rows.map((row): Certainty => {
        const reliable = reliability(Object.fromEntries(features.map((name, i) => [name, row[i]!])));
        return { reliable, misleading: (1 - reliable) / 2, uncertain: (1 - reliable) / 2 };
      }),
    threshold: (evidence: Evidence) => (evidence.kind === EvidenceKind.FACT ? adoptAt.fact : adoptAt.text),
    adopts: (evidence: Evidence, certainty: Certainty | null) =>
      certainty !== null && certainty.reliable >= (evidence.kind === EvidenceKind.FACT ? adoptAt.fact : adoptAt.text),
  };
}

/** Reads "… is/was/has been <Capitalised Name>" from a passage, a fact's value, or (closed book) the remembered fact. */
const NAME_AFTER_VERB = /\b(?:is|was|has been|became)\s+(?:the\s+\w+\s+)?([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*)*)/u;
/** Otherwise the first run of capitalised words that is neither a pronoun, a month nor the article's own title. */
const NAMES = /\b[A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*)*/gu;
const NOT_ANSWERS = /^(?:He|She|It|They|The|Before|After|In|On|January|February|March|April|May|June|July|August|September|October|November|December)$/;
export const readingGenerator: Generator = {
  name: 'extractive',
  generate: async (inputs: readonly GenerationInput[]): Promise<Generation[]> =>
    inputs.map(({ evidence, memory }) => {
      const source = evidence ?? memory ?? null;
      if (!source) return { answer: '', confidence: 0, score: null };
      if (source.kind === EvidenceKind.FACT) return { answer: source.value ?? '', confidence: 1, score: null };
      const name =
        NAME_AFTER_VERB.exec(source.text)?.[1] ??
        [...source.text.matchAll(NAMES)].map((match) => match[0]).find((run) => !NOT_ANSWERS.test(run) && !source.articleId.includes(run)) ??
        '';
      return { answer: name, confidence: name ? 0.8 : 0, score: name ? 2 : -2 };
    }),
};

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
/** The times the fakes' texts state: "from 2005 to 2007", "since 5 September 2024", "since 2019", "in July 2024", "in 2005". */
export const fakeTimesIn: TimeReader = (sentences) => sentences.map(timesOfSentence);

function timesOfSentence(text: string): EventTime[] {
  const times: EventTime[] = [];
  const at = (match: RegExpMatchArray, from: Date | null, to: Date | null): void => {
    if (!times.some((time) => match.index! < time.end && match.index! + match[0].length > time.start)) {
      times.push({ from, to, text: match[0], start: match.index!, end: match.index! + match[0].length });
    }
  };
  for (const m of text.matchAll(/\bfrom (\d{4}) to (\d{4})/g)) at(m, day(`${m[1]}-01-01`), day(`${Number(m[2]) + 1}-01-01`));
  for (const m of text.matchAll(/\bsince (\d{1,2}) ([A-Z][a-z]+) (\d{4})/g)) {
    at(m, new Date(Date.UTC(Number(m[3]), MONTHS.indexOf(m[2]!.toLowerCase()), Number(m[1]))), null);
  }
  for (const m of text.matchAll(/\bsince (\d{4})/g)) at(m, day(`${m[1]}-01-01`), null);
  for (const m of text.matchAll(/\bin ([A-Z][a-z]+) (\d{4})/g)) {
    const month = MONTHS.indexOf(m[1]!.toLowerCase());
    if (month >= 0) at(m, new Date(Date.UTC(Number(m[2]), month, 1)), new Date(Date.UTC(Number(m[2]), month + 1, 1)));
  }
  for (const m of text.matchAll(/\bin (\d{4})/g)) at(m, day(`${m[1]}-01-01`), day(`${Number(m[1]) + 1}-01-01`));
  return times;
}

/** Ports over `world`; `calls` counts what the stages asked of them. */
export function fakePorts(
  world: FakeWorld,
  gate: Gate | null = fakeGate((f) => (f.isFact ? 0.9 : 0.6)),
): AnsweringPorts & { calls: { searches: number; reRetrievals: number } } {
  const snapshots: SnapshotRecord[] = world.snapshots.map((date, i) => ({
    id: `snapshot-${date}`,
    takenAt: day(date),
    recordedAt: day(date),
    source: 'fake',
    status: SnapshotStatus.COMPLETE,
    complete: false,
    contentHash: String(i),
    articleCount: world.articles.length,
    changeCount: 0,
    completedAt: day(date),
    failure: null,
  }));
  const facts: FactRecord[] = world.articles.flatMap((article) =>
    (article.facts ?? []).map((fact, i) => ({
      id: `${article.id}:${fact.attribute}:${i}`,
      subject: article.id,
      attribute: fact.attribute,
      value: fact.value,
      change: fact.change ?? FactChangeKind.NEW,
      addedMembers: [],
      removedMembers: [],
      validFrom: day(fact.from),
      validTo: fact.to ? day(fact.to) : null,
      recordedAt: day(fact.from),
      eventTimes: [],
    })),
  );
  const passages: UnitRecord[] = world.articles.flatMap((article) =>
    (article.passages ?? []).map((passage, i) => ({
      id: `${article.id}:p${i}`,
      rowId: null,
      articleId: article.id,
      text: passage.text,
      validFrom: day(passage.from),
      validTo: passage.to ? day(passage.to) : null,
      eventTimes: [],
    })),
  );
  passages.forEach((passage, row) => (passage.rowId = row));
  const calls = { searches: 0, reRetrievals: 0 };
  const ranked = (query: string, asOf: Date, k: number, exclude: ReadonlySet<number> = new Set()): SearchHit[] =>
    passages
      .filter((passage) => isValidAt(passage, asOf) && !exclude.has(passage.rowId!))
      .map((passage) => ({ passage, score: overlap(query, passage.text) }))
      .filter(({ score }) => score > 0)
      .sort((a, b) => b.score - a.score || a.passage.id.localeCompare(b.passage.id))
      .slice(0, k)
      .map(({ passage, score }, rank) => ({
        ...passage,
        unit: SearchUnit.PASSAGE,
        rank: rank + 1,
        score,
        denseScore: null,
        denseRank: null,
        lexicalScore: score,
        lexicalRank: rank + 1,
      }));
  const byArticle = (ids: readonly string[]) => new Map(ids.map((id) => [id, facts.filter((fact) => fact.subject === id)]));
  return {
    calls,
    facts: {
      snapshots: async () => snapshots,
      articleTitles: async () => world.articles.map(({ id }) => ({ id, title: id })),
      attributeNames: async () => [...new Set(facts.map((fact) => fact.attribute))],
      attributesHeldTogether: async (first, second) =>
        facts.some((one) => one.attribute === first && facts.some((other) => other.subject === one.subject && other.attribute === second)),
      factVersions: async (ids) => byArticle(ids),
      previousFact: async (factId) => {
        const fact = facts.find((f) => f.id === factId);
        return (
          facts.filter((f) => fact && f.subject === fact.subject && f.attribute === fact.attribute && f.validTo?.getTime() === fact.validFrom.getTime())[0] ??
          null
        );
      },
      changeProfiles: async (ids, window) =>
        new Map(
          ids.map((id): [string, ChangeProfile] => {
            const changed = facts.filter(
              (f) =>
                f.subject === id &&
                ((f.validFrom > window.from && f.validFrom <= window.to) || (f.validTo && f.validTo > window.from && f.validTo <= window.to)),
            );
            const article = world.articles.find((a) => a.id === id);
            const first = Math.min(...[...(article?.facts ?? []), ...(article?.passages ?? [])].map(({ from }) => day(from).getTime()));
            const added = first > window.from.getTime() && first <= window.to.getTime();
            return [id, { changedFacts: changed, sentenceChanges: 0, recentRevisions: changed.length, added }];
          }),
        ),
      factsByIds: async (ids) => new Map(facts.filter((f) => ids.includes(f.id)).map((f) => [f.id, f])),
      sentencesByIds: async () => new Map<string, SentenceRecord>(),
    },
    search: {
      embedderId: 'fake-search',
      batchSearch: async (queries: readonly string[], options: SearchOptions) => {
        calls.searches += 1;
        return queries.map((query) => ranked(query, options.asOf, options.k));
      },
      reRetrieve: async (requests: readonly ReRetrievalRequest[], asOf: Date, k: number) => {
        calls.reRetrievals += 1;
        return requests.map((request) => ranked(`${request.question} ${request.answer}`, asOf, k, new Set(request.excludeRowIds)));
      },
      namesNeverMentioned: async (names) => names.filter((name) => !passages.some((passage) => passage.text.toLowerCase().includes(name.toLowerCase()))),
      unitsByIds: async (_unit, ids) => new Map(passages.filter((passage) => ids.includes(passage.id)).map((passage) => [passage.id, passage])),
      unitsKnownAsOf: async (_unit, ids, asOf, limit) =>
        passages.filter((passage) => ids.includes(passage.articleId) && passage.validFrom <= asOf).slice(0, limit),
    },
    encoder: {
      encoderId: 'fake-encoder',
      dimension: DIMENSION,
      questionVectors: async (questions: readonly QuestionAnalysis[]) => questions.map((question) => hashedVector(question.text)),
      embedQueries: async (texts) => {
        const out = new Float32Array(texts.length * DIMENSION);
        texts.forEach((text, i) => out.set(hashedVector(text), i * DIMENSION));
        return out;
      },
    },
    generators: {
      get: (name) => {
        if (name && name !== 'extractive') throw new Error(`generator '${name}' is not available; available: extractive`);
        return readingGenerator;
      },
    },
    gate,
    timesIn: fakeTimesIn,
  };
}
