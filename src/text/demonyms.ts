/**
 * Countries named by their people's adjective ("the Dutch prime minister": the Netherlands; "the
 * British PM": the United Kingdom), from the world-countries data (mledoze/countries, ODbL 1.0).
 * Only independent countries are named: a territory shares its sovereign's demonym ("Dutch" for
 * Aruba too). A demonym two of them share ("Congolese", "Dominican") names neither. A country is
 * named in each way the data writes it (common and official name, other spellings: Czechia,
 * Czech Republic), as an article's title may use any of them.
 */
import { createRequire } from 'node:module';
import type { Countries, Country } from 'world-countries';
import { nameWords } from './normalize.js';

/** A country's names, each as its words: letter codes ("NL") are no name. */
function namesOf(country: Country): string[][] {
  const written = [country.name.common, country.name.official, ...country.altSpellings.filter((spelling) => /\p{Ll}/u.test(spelling))];
  const names = new Map(written.map((name) => [nameWords(name).join(' '), nameWords(name)]));
  return [...names.values()].filter((words) => words.length > 0);
}

function demonymTable(): Map<string, string[][]> {
  // A CommonJS package whose typings declare an ES default export: required, it is the list itself.
  const countries = createRequire(import.meta.url)('world-countries') as Countries;
  const countriesOf = new Map<string, Country[]>();
  for (const country of countries) {
    const english = country.demonyms?.eng;
    if (!english || !country.independent) continue;
    for (const demonym of new Set([english.m, english.f])) {
      const key = nameWords(demonym).join(' ');
      if (key) countriesOf.set(key, [...(countriesOf.get(key) ?? []), country]);
    }
  }
  return new Map([...countriesOf].flatMap(([demonym, named]) => (named.length === 1 ? [[demonym, namesOf(named[0]!)] as const] : [])));
}

let table: Map<string, string[][]> | null = null;

/**
 * The names of the one country a demonym names ("Dutch" → [["netherlands"], ["kingdom", "of", "the",
 * "netherlands"], ["holland"], …]), each as lower-case words without marks; null for any other word.
 */
export function countryNamesOfDemonym(word: string): string[][] | null {
  table ??= demonymTable();
  return table.get(nameWords(word).join(' ')) ?? null;
}
