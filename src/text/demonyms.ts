/**
 * Countries named by their people's adjective ("the Dutch prime minister": the Netherlands; "the
 * British PM": the United Kingdom), from the world-countries data (mledoze/countries). Only
 * independent countries are named: a territory shares its sovereign's demonym ("Dutch" for Aruba
 * too). A demonym two of them share ("Congolese", "Dominican") names neither.
 */
import { createRequire } from 'node:module';
import type { Countries } from 'world-countries';
import { nameWords } from './normalize.js';

function demonymTable(): Map<string, string[]> {
  // A CommonJS package whose typings declare an ES default export: required, it is the list itself.
  const countries = createRequire(import.meta.url)('world-countries') as Countries;
  const countriesOf = new Map<string, Set<string>>();
  for (const country of countries) {
    const english = country.demonyms?.eng;
    if (!english || !country.independent) continue;
    for (const demonym of new Set([english.m, english.f])) {
      const key = nameWords(demonym).join(' ');
      if (!key) continue;
      const named = countriesOf.get(key) ?? new Set<string>();
      named.add(country.name.common);
      countriesOf.set(key, named);
    }
  }
  return new Map([...countriesOf].flatMap(([demonym, named]) => (named.size === 1 ? [[demonym, nameWords([...named][0]!)] as const] : [])));
}

let table: Map<string, string[]> | null = null;

/** The words of the one country a demonym names ("dutch" → ["netherlands"]), lower case and without marks; null for any other word. */
export function countryOfDemonym(word: string): string[] | null {
  table ??= demonymTable();
  return table.get(nameWords(word).join(' ')) ?? null;
}
