/**
 * Countries named by a word that is not their title's: their people's adjective ("the Dutch prime
 * minister": the Netherlands; "the British PM": the United Kingdom), another name of one word
 * ("Holland", "Czechia"), or a name's last word after formal ones ("Britain" of Great Britain,
 * "Turkey" of Republic of Turkey), from the world-countries data (mledoze/countries, ODbL 1.0).
 * Only independent countries are named: a territory shares its sovereign's demonym ("Dutch" for
 * Aruba too). A word two of them may be called by ("Congolese"; "Korea", which ends North and
 * South Korea's names) names neither. A country is named in each way the data writes it (common
 * and official name, other spellings: Czechia, Czech Republic), as an article's title may use any
 * of them.
 */
import { createRequire } from 'node:module';
import type { Countries, Country } from 'world-countries';
import { nameWords } from './normalize.js';

/** Words before a name's last that leave it the country's own name ("Great Britain", "Republic of Turkey"). */
const FORMAL = new Set(['great', 'republic', 'of', 'the']);

/** A country's names, each as its words: letter codes ("NL") are no name. */
function namesOf(country: Country): string[][] {
  const written = [country.name.common, country.name.official, ...country.altSpellings.filter((spelling) => /\p{Ll}/u.test(spelling))];
  const names = new Map(written.map((name) => [nameWords(name).join(' '), nameWords(name)]));
  return [...names.values()].filter((words) => words.length > 0);
}

function demonymsOf(country: Country): string[] {
  const english = country.demonyms?.eng;
  return english ? [english.m, english.f].map((demonym) => nameWords(demonym).join(' ')).filter(Boolean) : [];
}

/** The words that name the country on their own: its demonyms, its names of one word, "Britain" of Great Britain. */
function namingWords(country: Country): string[] {
  const formal = namesOf(country).filter((words) => words.slice(0, -1).every((word) => FORMAL.has(word)));
  return [...demonymsOf(country), ...formal.map((words) => words.at(-1)!)];
}

/** The words any of the country's names ends with ("Korea" for North and South Korea alike), and its demonyms. */
function claimedWords(country: Country): string[] {
  return [...demonymsOf(country), ...namesOf(country).map((words) => words.at(-1)!)];
}

function countryTable(): Map<string, string[][]> {
  // A CommonJS package whose typings declare an ES default export: required, it is the list itself.
  const countries = (createRequire(import.meta.url)('world-countries') as Countries).filter((country) => country.independent);
  const claims = new Map<string, Set<Country>>();
  for (const country of countries) for (const word of claimedWords(country)) claims.set(word, (claims.get(word) ?? new Set()).add(country));
  const table = new Map<string, string[][]>();
  for (const country of countries) {
    for (const word of namingWords(country)) if (claims.get(word)?.size === 1) table.set(word, namesOf(country));
  }
  return table;
}

let table: Map<string, string[][]> | null = null;

/**
 * The names of the one country a word names ("Dutch" → [["netherlands"], ["kingdom", "of", "the",
 * "netherlands"], ["holland"], …]), each as lower-case words without marks; null for any other word.
 */
export function countryNamesOf(word: string): string[][] | null {
  table ??= countryTable();
  return table.get(nameWords(word).join(' ')) ?? null;
}
