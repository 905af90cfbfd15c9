/**
 * The stage that reads a question's period in the text (event time) rather than at instants of
 * the snapshot clock. Its evidence is every version of the named articles' passages the store
 * knew as of asOf, current or not (or, when it names none, of the pages a search finds first): the
 * words of each sentence governed by a time that fits the period, the best-fitting first (for the
 * value beside a named one, the nearest; for the first or last value, the earliest or latest),
 * then the pages' passages most like the question. Its answer is chosen by chooseReading.
 */
import { LRUCache } from 'lru-cache';
import { contentTerms, termCoverage } from '../text/language.js';
import type { UnitRecord } from '../graph/retrievalRepository.js';
import { SearchUnit } from '../retrieval/retriever.js';
import { attemptOf, bestByReliability, blankCandidate, type Attempt, type GatedCandidate } from './attempts.js';
import { documentEvidence, isReading } from './evidence.js';
import { namesValue } from './factLinker.js';
import type { InstantPlan } from './planning.js';
import { horizonOf, KNOWN_PASSAGES, pagesSearchFinds } from './pages.js';
import type { AnsweringPorts } from './ports.js';
import { byKeys, nearness, onSideOf, type PlanAnchor } from './textAnchors.js';
import { DAY, periodFit, readingsFor, type Period, type TimeReader } from './textTime.js';
import { EvidenceKind, type Evidence } from './types.js';

/**
 * Readings kept as evidence: at least this many, or k when it is more. On TimeQA's tune half, 20
 * readings with eight page passages (below) hold the answer for 96.0 % of the answerable
 * questions, 10 readings with ten passages for 95.7 %; without passages, 20 readings held it for
 * 84.3 % and 40 for 85.1 %.
 */
const MIN_READINGS = 20;
/**
 * The named pages' passages most like the question, read beside the readings: the sentence that
 * answers often states no time of its own ("Downs was incarcerated at the Oregon Women's
 * Correctional Center"), the time being stated elsewhere or nowhere. On TimeQA's tune half, beside
 * 20 readings, they raise the answerable questions with a passage holding the answer among the
 * evidence from 84.3 % to 91.7, 94.0, 96.0 and 96.8 % with 3, 5, 8 and 12 of them (README, "Time
 * in questions"): 8, after which four more add under a point.
 */
const PAGE_PASSAGES = 8;
/** Content words of passage texts: a page's passages are weighed for each question about it. */
const passageTerms = new LRUCache<string, Set<string>>({
  maxSize: 4_000_000,
  sizeCalculation: (_terms, text) => Math.max(1, text.length),
  memoMethod: (text) => contentTerms(text),
});

/** Candidates whose words fit the period at least this share of the best fit are chosen among by the gate. */
const NEAR_BEST_FIT = 0.8;

interface Found {
  evidence: Evidence;
  fit: number;
  /** Share of the question's content words the reading holds. */
  coverage: number;
}

/** The readings of the plan's period and the passages read beside them: its first round of evidence. */
async function readingsOf(
  plan: InstantPlan,
  period: Period,
  ports: Pick<AnsweringPorts, 'search'>,
  timesIn: TimeReader,
): Promise<{ readings: Evidence[]; alike: Evidence[] }> {
  // The pages whose whole title the question names, when there are any: "prime minister of France"
  // names France, and only half of "Prime Minister of the United Kingdom".
  const whole = plan.subjects.filter((subject) => subject.coverage === 1);
  const articleIds = (whole.length > 0 ? whole : plan.subjects).map((subject) => subject.articleId);
  // A question that names its subject is read in that subject's pages only: another page's news of
  // the period ("Angela Rayner, deputy prime minister since July 2024") does not answer for France.
  // A question that names its subject in other words ("the mother of Frank and Jesse James") is
  // read in the whole pages of the first passages a search finds.
  const pages = articleIds.length > 0 ? articleIds : await pagesSearchFinds(plan.query, plan.asOf, ports);
  const known = await ports.search.unitsKnownAsOf(SearchUnit.PASSAGE, pages, plan.asOf, KNOWN_PASSAGES);
  const asked = contentTerms(plan.query);
  // An event's own reading dates the question; it does not answer it ("Paris hosted the Olympics in 2024").
  const isEvent = (articleId: string, text: string): boolean =>
    plan.anchor?.side === 'during' && plan.anchor.reading.articleId === articleId && plan.anchor.reading.text === text;
  const found: Found[] = known.flatMap((unit) =>
    readingsFor(unit.text, period, timesIn, horizonOf(unit.validTo, plan.asOf))
      .filter((reading) => !isEvent(unit.articleId, reading.text))
      .map((reading) => ({
        evidence: unitEvidence(unit, {
          text: reading.text,
          statedTime: { text: reading.time.text, from: reading.time.from, to: reading.time.to, sentence: reading.sentence },
        }),
        fit: reading.fit,
        coverage: termCoverage(asked, reading.text),
      })),
  );
  const byRelation = beside(plan, found) ?? inOrdinalOrder(plan, found);
  const kept =
    byRelation ??
    [...found].sort(
      // The best fit first; among equal fits, the reading sharing most of the question's words, then the latest version.
      (a, b) => b.fit - a.fit || b.coverage - a.coverage || b.evidence.validFrom.getTime() - a.evidence.validFrom.getTime(),
    );
  const readings = kept.slice(0, Math.max(MIN_READINGS, plan.k)).map((entry, rank) => ({ ...entry.evidence, rank: rank + 1 }));
  // Only beside a reading of the period itself: where no sentence speaks of it, the question is not
  // answered from the text, and the value beside another or the first one is chosen by its time.
  const alike = readings.length === 0 || byRelation ? [] : mostAlike(latestVersions(known), asked, PAGE_PASSAGES);
  return { readings, alike: alike.map((unit, rank) => unitEvidence(unit, { rank: readings.length + rank + 1 })) };
}

const unitEvidence = (unit: UnitRecord, fields: Partial<Evidence> = {}): Evidence =>
  documentEvidence({
    kind: EvidenceKind.PASSAGE,
    id: unit.id,
    articleId: unit.articleId,
    text: unit.text,
    validFrom: unit.validFrom,
    validTo: unit.validTo,
    rowId: unit.rowId,
    round: 1,
    ...fields,
  });

/** Each text once, in its latest version, latest first: a passage kept by several snapshots is one passage. */
function latestVersions(units: readonly UnitRecord[]): UnitRecord[] {
  const latest = new Map<string, UnitRecord>();
  for (const unit of units) if ((latest.get(unit.text)?.validFrom ?? -Infinity) < unit.validFrom) latest.set(unit.text, unit);
  return [...latest.values()].sort((a, b) => b.validFrom.getTime() - a.validFrom.getTime());
}

/**
 * The `n` units sharing most of the asked words, each word weighed by how few of the units hold
 * it (log((N + 1) / df): a page's name, in most of its passages, weighs little): a search inside
 * the named pages. Among equals, the first given.
 */
export function mostAlike<T extends Pick<UnitRecord, 'text'>>(units: readonly T[], asked: ReadonlySet<string>, n: number): T[] {
  const held = units.map((unit) => passageTerms.memo(unit.text));
  const weighted = [...asked].map((term) => ({ term, weight: Math.log((units.length + 1) / Math.max(1, held.filter((terms) => terms.has(term)).length)) }));
  return units
    .map((unit, i) => ({ unit, score: weighted.reduce((sum, { term, weight }) => sum + (held[i]!.has(term) ? weight : 0), 0) }))
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, n)
    .map((entry) => entry.unit);
}

/**
 * For a plan asking for the first or the last value, the readings saying most of the question's
 * words first, then the earliest (or latest) time; null for others.
 */
function inOrdinalOrder(plan: InstantPlan, found: readonly Found[]): Found[] | null {
  if (!plan.ordinal) return null;
  const key = ordinalKey(plan);
  return [...found].sort((a, b) => byKeys(key(a.evidence), key(b.evidence)));
}

/** The sort keys of a reading for an ordinal plan: what its sentence says of the question, then when it starts. */
function ordinalKey(plan: InstantPlan): (evidence: Evidence) => number[] {
  const asked = relationWords(plan);
  const direction = plan.ordinal === 'last' ? -1 : 1;
  return (evidence) => [-termCoverage(asked, evidence.statedTime?.sentence ?? evidence.text), direction * (evidence.statedTime?.from?.getTime() ?? -Infinity)];
}

/** For a plan asking for the value beside a named one, the readings on its side, nearest first (textAnchors.ts); null for others. */
function beside(plan: InstantPlan, found: readonly Found[]): Found[] | null {
  const anchor = plan.anchor;
  if (!anchor || anchor.side === 'during') return null;
  const asked = relationWords(plan);
  const keyed = found
    .filter((entry) => onSideOf(anchor, entry.evidence.statedTime?.from ?? null))
    .map((entry) => ({ entry, key: nearness(anchor, asked, entry.evidence, '') }));
  return keyed.sort((a, b) => byKeys(a.key, b.key)).map(({ entry }) => entry);
}

/**
 * Each plan's readings of its period, as a first round with a blank candidate per reading, and the
 * passages read beside them as an attempt of their own: they are read and weighed apart, so that
 * what the gate sees of a reading (agreement, the reader's lead) is the same with or without them.
 * `withPagePassages` joins the two once weighed.
 */
export async function readPeriods(
  plans: readonly InstantPlan[],
  ports: Pick<AnsweringPorts, 'search' | 'timesIn'>,
): Promise<Array<{ readings: Attempt; alike: Attempt }>> {
  const timesIn = ports.timesIn;
  return Promise.all(
    plans.map(async (plan) => {
      if (!plan.period || !timesIn) return { readings: attemptOf(plan), alike: attemptOf(plan) };
      const { readings, alike } = await readingsOf(plan, plan.period, ports, timesIn);
      const round = { round: 1, query: plan.query, omega: 0, hits: [...readings, ...alike] };
      return {
        readings: attemptOf(
          plan,
          readings.map((evidence) => blankCandidate(evidence)),
          [round],
        ),
        alike: attemptOf(
          plan,
          alike.map((evidence) => blankCandidate(evidence)),
        ),
      };
    }),
  );
}

/** A plan's readings with the passages read beside them as candidates after theirs. */
export function withPagePassages(readings: Attempt, alike: Attempt): Attempt {
  return { ...readings, candidates: [...readings.candidates, ...alike.candidates] };
}

/** How well the time a candidate's words state fits its plan's period (textTime.ts periodFit); 0 without one. */
export function readingFit({ period, asOf }: InstantPlan, { evidence }: GatedCandidate): number {
  return period && evidence.statedTime ? periodFit(period, evidence.statedTime, horizonOf(evidence.validTo, asOf)) : 0;
}

/**
 * A period's plan read in the page of the fact the snapshot clock found for the same question,
 * when it found one: "Cambodia's prime minister" names half of "Politics of Cambodia" and half of
 * "Prime Minister of the United Kingdom", and the clock's fact says which of the two is asked of.
 */
export function focusedOnClockFact(plan: InstantPlan, clockAttempts: readonly Attempt[]): InstantPlan {
  const subject = clockAttempts.find((attempt) => attempt.plan.factMatch)?.plan.factMatch?.subject;
  return subject ? { ...plan, subjects: [subject] } : plan;
}

/**
 * The candidate of a period's readings to answer with, or where none answers, of the passages read
 * beside them. For an instant, or without the readings' gate: among those fitting nearly as well as
 * the best, the one whose words share most of the question's ("women's singles" over "men's"), then
 * the one the gate trusts most. What held on a day is what the latest claim holding then says
 * ("Barnier has been prime minister since 5 September 2024", not Attal's January), and the fit ranks
 * exactly so; the readings' gate, fitted on periods of years, does not weigh a fit of one day in
 * hundreds. For a longer period, the reading that gate trusts most: it weighs the fit with the
 * reader's scores and the words read, and on TimeQA's tune half chose better than the fit first
 * (README, "Time in questions").
 */
export function chooseReading(attempt: Attempt, readingGate: boolean): Attempt {
  const { period, anchor } = attempt.plan;
  if (anchor && anchor.side !== 'during') return nearestReading(attempt, anchor);
  if (attempt.plan.ordinal) {
    const key = ordinalKey(attempt.plan);
    return { ...attempt, chosen: firstByKeys(attempt.candidates, (candidate) => key(candidate.evidence)) };
  }
  const instant = period?.from != null && period.to != null && period.to.getTime() - period.from.getTime() <= DAY;
  // A passage read beside the readings answers only where no reading does: chosen among them by the
  // gate, about one in ten was right on TimeQA's tune half, against two in five of the readings.
  const answered = attempt.candidates.filter((candidate) => candidate.answer !== '');
  const readings = answered.filter((candidate) => isReading(candidate.evidence));
  const choosable = readings.length > 0 ? readings : answered;
  if (readingGate && !instant) return { ...attempt, chosen: bestByReliability(choosable) };
  const { query } = attempt.plan;
  const fitOf = (candidate: GatedCandidate): number => readingFit(attempt.plan, candidate);
  const asked = contentTerms(query);
  const bestFit = Math.max(0, ...choosable.map(fitOf));
  const near = choosable
    .filter((candidate) => fitOf(candidate) >= NEAR_BEST_FIT * bestFit)
    .map((candidate) => ({ candidate, coverage: termCoverage(asked, candidate.evidence.text) }));
  near.sort((a, b) => b.coverage - a.coverage || (b.candidate.certainty?.reliable ?? 0) - (a.candidate.certainty?.reliable ?? 0));
  return { ...attempt, chosen: near[0]?.candidate ?? null };
}

/** The question's words a reading beside a named value should say: neither its subject's nor the value's (its query leaves those out). */
function relationWords(plan: InstantPlan): Set<string> {
  const subject = contentTerms(plan.subjects.flatMap((linked) => linked.words).join(' '));
  return new Set([...contentTerms(plan.query)].filter((term) => !subject.has(term)));
}

/**
 * The reading nearest to a named value, after or before it (textAnchors.ts `nearness`), of those
 * whose answer is not the value itself; the gate only breaks ties: it weighs how well a time fits a
 * period, and the open period after a value fits the value's own reading best.
 */
function nearestReading(attempt: Attempt, anchor: PlanAnchor): Attempt {
  const others = attempt.candidates.filter((candidate) => !namesValue(candidate.answer, anchor.words));
  const asked = relationWords(attempt.plan);
  return { ...attempt, chosen: firstByKeys(others, (candidate) => nearness(anchor, asked, candidate.evidence, candidate.answer)) };
}

/** The answered candidate first by `key`, the one the gate trusts most among equals; null when none answered. */
function firstByKeys(candidates: readonly GatedCandidate[], key: (candidate: GatedCandidate) => number[]): GatedCandidate | null {
  const keyed = candidates
    .filter((candidate) => candidate.answer !== '')
    .map((candidate) => ({ candidate, key: [...key(candidate), -(candidate.certainty?.reliable ?? 0)] }));
  return keyed.sort((a, b) => byKeys(a.key, b.key))[0]?.candidate ?? null;
}
