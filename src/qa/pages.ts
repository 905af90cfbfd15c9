/**
 * The pages a question is read in when the text, not the snapshot clock, answers it (a period, an
 * event's time, the value beside a named one), and how far the claims read there reach.
 */
import { SearchMode, SearchUnit } from '../retrieval/retriever.js';
import type { AnsweringPorts } from './ports.js';

/** Passage versions of the named articles read; a page of a few hundred passages is read whole. */
export const KNOWN_PASSAGES = 400;
/** Passages a search finds instead, for a question whose subject is named in other words; the pages of the first few are read. */
const SEARCHED_PASSAGES = 10;
const SEARCHED_PAGES = 2;

/** Where an open claim ("since 9 January 2024") ends: when the source stopped saying it, or asOf. */
export function horizonOf(validTo: Date | null, asOf: Date): Date {
  return validTo && validTo < asOf ? validTo : asOf;
}

/** The pages of the first passages a search for `query` finds as of `asOf`. */
export async function pagesSearchFinds(query: string, asOf: Date, ports: Pick<AnsweringPorts, 'search'>): Promise<string[]> {
  const [hits] = await ports.search.batchSearch([query], { asOf, k: SEARCHED_PASSAGES, mode: SearchMode.HYBRID, unit: SearchUnit.PASSAGE });
  return [...new Set(hits!.slice(0, SEARCHED_PAGES).map((hit) => hit.articleId))];
}
