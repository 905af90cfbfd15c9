/**
 * The time the text gives for what a question dates its answer by: another event ("Who was prime
 * minister when Paris hosted the Olympics?") or a named value ("Which club did Gary Mills manage
 * after Alfreton Town?"). The question states no date; the pages it names do ("Paris hosted the
 * 2024 Summer Olympics from 26 July to 11 August 2024", "He managed Alfreton Town from 2005 to
 * 2007"), and that stated time becomes the period the question is answered for.
 */
import type { EventTime } from '../domain/model.js';
import { SearchUnit } from '../retrieval/retriever.js';
import { contentTerms, termCoverage } from '../text/language.js';
import { folded } from '../text/normalize.js';
import { horizonOf, KNOWN_PASSAGES, pagesSearchFinds } from './pages.js';
import type { AnsweringPorts } from './ports.js';
import type { LinkedSubject } from './subjects.js';
import type { Evidence } from './types.js';
import { readingsFor, type Period, type TimeReader } from './textTime.js';

/** What the answer is dated by: an event in the question's words, or a value it names. */
export interface AnchorRequest {
  kind: 'event' | 'name';
  /** "Paris hosted the Olympics", "Alfreton Town". */
  words: string;
  subjects: readonly LinkedSubject[];
  asOf: Date;
}

/** Where the text dates the anchor. */
export interface TextAnchor {
  /** The words the stated time governs, which name the anchor. */
  text: string;
  time: EventTime;
  articleId: string;
}

/**
 * Where the text dates what a question relates its answer to, and the period that makes: the
 * event's own time ("when …"), or the time from a named value's start on, or up to its end, where
 * the reading nearest to it answers.
 */
export interface PlanAnchor {
  side: 'during' | 'before' | 'after';
  /** As the question says it: "Paris hosted the Olympics", "Alfreton Town". */
  words: string;
  reading: TextAnchor;
  period: Period;
}

/** An event is dated by a reading holding at least this share of its content words. */
const MIN_EVENT_COVERAGE = 0.5;
const ALL_TIME: Period = { from: null, to: null };

const lengthOf = ({ from, to }: EventTime): number => (from && to ? to.getTime() - from.getTime() : Infinity);
const startOf = ({ from }: Pick<EventTime, 'from'>): number => from?.getTime() ?? -Infinity;

/** Whether `text` holds the name as whole words, diacritics and case aside. */
function names(text: string, name: string): boolean {
  return ` ${folded(text)} `.includes(` ${folded(name)} `);
}

/**
 * Each request's anchor, or null when nothing the store knew as of its asOf dates it. An event is
 * looked for in the named pages and in those a search for its words finds first, and is dated by
 * the reading covering most of its words (then the most precise time); a named value, in the named
 * pages (the pages a search finds when none is named), by the earliest reading naming it.
 */
export async function anchorsInText(
  requests: readonly AnchorRequest[],
  ports: Pick<AnsweringPorts, 'search'>,
  timesIn: TimeReader,
): Promise<Array<TextAnchor | null>> {
  return Promise.all(
    requests.map(async (request) => {
      const named = request.subjects.map((subject) => subject.articleId);
      const searched = request.kind === 'event' || named.length === 0 ? await pagesSearchFinds(request.words, request.asOf, ports) : [];
      const pages = [...new Set([...named, ...searched])];
      if (pages.length === 0) return null;
      const units = await ports.search.unitsKnownAsOf(SearchUnit.PASSAGE, pages, request.asOf, KNOWN_PASSAGES);
      const readings = units.flatMap((unit) =>
        readingsFor(unit.text, ALL_TIME, timesIn, horizonOf(unit.validTo, request.asOf)).map((reading) => ({ ...reading, articleId: unit.articleId })),
      );
      if (request.kind === 'name') {
        const naming = readings.filter((reading) => names(reading.text, request.words)).sort((a, b) => startOf(a.time) - startOf(b.time));
        return naming[0] ?? null;
      }
      const terms = contentTerms(request.words);
      const scored = readings
        .map((reading) => ({ reading, coverage: termCoverage(terms, reading.text) }))
        .filter(({ coverage }) => coverage >= MIN_EVENT_COVERAGE)
        .sort((a, b) => b.coverage - a.coverage || lengthOf(a.reading.time) - lengthOf(b.reading.time) || startOf(a.reading.time) - startOf(b.reading.time));
      return scored[0]?.reading ?? null;
    }),
  );
}

/** Whether a reading stating a time from `statedFrom` lies on the anchor's side: starting with the named value or after it (after), with it or before it (before). */
export function onSideOf(anchor: PlanAnchor, statedFrom: Date | null): boolean {
  const at = startOf(anchor.reading.time);
  const start = startOf({ from: statedFrom });
  return anchor.side === 'after' ? start >= at : start <= at;
}

/**
 * How near a reading is to the named value a plan asks beside, as keys to sort by, smallest first:
 * the share of the question's own words its sentence says (`asked`, not its subject's nor the value's:
 * "replaced … in the Dow Jones"); whether it names the value too ("Arne Slot has been head coach,
 * succeeding Jürgen Klopp"); how much of what the value's own reading says of it it says, besides
 * the answer (Starmer "has been prime minister", as Sunak had, before Dowden who "has served as
 * deputy prime minister"); and how far its time starts from the value's, one starting with it last:
 * that is more often another thing said of the same time.
 */
export function nearness(anchor: PlanAnchor, asked: ReadonlySet<string>, reading: Evidence, answer: string): number[] {
  const at = startOf(anchor.reading.time);
  const start = startOf({ from: reading.statedTime?.from ?? null });
  const sentence = reading.statedTime?.sentence ?? reading.text;
  return [
    -termCoverage(asked, sentence),
    names(sentence, anchor.words) ? 0 : 1,
    -overlap(wordsBesides(anchor.reading.text, anchor.words), wordsBesides(reading.text, answer)),
    start === at ? Infinity : Math.abs(start - at),
  ];
}

/** Orders by keys, the first that differs deciding. */
export function byKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** The content words of a reading besides those of a name it holds. */
function wordsBesides(text: string, name: string): Set<string> {
  const named = contentTerms(name);
  return new Set([...contentTerms(text)].filter((term) => !named.has(term)));
}

/** The share of the two sets' words they have in common (Jaccard); 0 for two empty sets. */
function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  const common = [...a].filter((term) => b.has(term)).length;
  return common === 0 ? 0 : common / (a.size + b.size - common);
}
