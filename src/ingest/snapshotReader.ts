import { articleIdOf, INVISIBLE_CHARACTER } from '../domain/model.js';
import { quoteInput } from '../domain/errors.js';
import { InvalidSnapshotError, type InputProblem } from './errors.js';
import { attributeKey } from './factDiff.js';
import { sizeProblems } from './inputLimits.js';
import { readJsonLines } from './jsonLines.js';

/** One article of a snapshot, as users supply it (README.md, "Snapshot files"). */
export interface ArticleInput {
  id: string;
  title: string;
  text: string;
  infobox: Record<string, string>;
}

/**
 * Checks one parsed article and returns it in canonical form, or the list of what is wrong.
 * Shared by the JSON Lines reader and the GraphQL mutation so both accept the same input.
 */
export function checkArticle(raw: unknown): ArticleInput | string[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return ['expected a JSON object with "id" and "text"'];
  }
  const record = raw as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof record.id !== 'string' || record.id.trim() === '') problems.push('"id" must be a non-empty string');
  if (typeof record.text !== 'string') problems.push('"text" must be a string');
  if (record.title !== undefined && record.title !== null && typeof record.title !== 'string') problems.push('"title" must be a string when given');
  // No prototype: an attribute named "__proto__" is an attribute like any other, not a prototype to set.
  const infobox: Record<string, string> = Object.create(null) as Record<string, string>;
  const entries = infoboxEntries(record.infobox, problems);
  const attributeByKey = new Map<string, string>();
  for (const [attribute, value] of entries) {
    const twin = attributeByKey.get(attributeKey(attribute));
    attributeByKey.set(attributeKey(attribute), attribute);
    if (attribute.trim() === '') problems.push('"infobox" has an empty attribute name');
    else if (twin !== undefined) problems.push(`"infobox" names ${quoteInput(attribute)} and ${quoteInput(twin)}, the same attribute`);
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      infobox[attribute.trim()] = String(value).trim();
    } else problems.push(`"infobox".${quoteInput(attribute)} must be a string, number or boolean`);
  }
  problems.push(...unusableCharacters(record, infobox));
  if (problems.length > 0) return problems;
  // One name, one article: the composed (NFC) and decomposed (NFD) spellings of "Café" look alike and must not become two.
  const id = articleIdOf(record.id as string);
  const article = { id, title: ((record.title as string | undefined) ?? '').trim().normalize('NFC') || id, text: record.text as string, infobox };
  const oversized = sizeProblems(article);
  return oversized.length > 0 ? oversized : article;
}

// With the u flag a valid surrogate pair is one code point, so this matches only lone halves.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Where `pattern` first matches in `text`, counted in characters (code points) from 1, with the character. */
function firstMatch(text: string, pattern: RegExp): { position: number; codePoint: string } | null {
  const index = text.search(pattern);
  if (index < 0) return null;
  const codePoint = `U+${text.codePointAt(index)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return { position: [...text.slice(0, index)].length + 1, codePoint };
}

/**
 * Strings with a lone UTF-16 surrogate are not Unicode: Neo4j would store them with U+FFFD in its
 * place, so an article id would no longer match itself. Names (the id and attribute names) must
 * also be visible throughout: "France\u200b" became a second France, and ranked first in search.
 * Each is refused with the field, the character and its position.
 */
function unusableCharacters(record: Record<string, unknown>, infobox: Record<string, string>): string[] {
  const fields: Array<{ field: string; value: unknown; name?: boolean }> = [
    { field: '"id"', value: typeof record.id === 'string' ? record.id.trim() : record.id, name: true },
    { field: '"title"', value: record.title },
    { field: '"text"', value: record.text },
    ...Object.entries(infobox).flatMap(([attribute, value]) => [
      { field: `the "infobox" attribute name ${quoteInput(attribute)}`, value: attribute, name: true },
      { field: `"infobox".${quoteInput(attribute)}`, value },
    ]),
  ];
  return fields.flatMap(({ field, value, name }) => {
    if (typeof value !== 'string') return [];
    const lone = firstMatch(value, LONE_SURROGATE);
    if (lone) return [`${field} has a lone UTF-16 surrogate at character ${lone.position} (not valid Unicode)`];
    const invisible = name ? firstMatch(value, INVISIBLE_CHARACTER) : null;
    return invisible
      ? [`${field} has an invisible character, ${invisible.codePoint}, at character ${invisible.position}: names must be visible throughout`]
      : [];
  });
}

/** The infobox as attribute/value pairs: a JSON object, or a list of {attribute, value} (GraphQL input). */
function infoboxEntries(infobox: unknown, problems: string[]): Array<[string, unknown]> {
  if (infobox === undefined || infobox === null) return [];
  if (Array.isArray(infobox)) {
    return infobox.map((entry: { attribute?: unknown; value?: unknown }) => [String(entry?.attribute ?? ''), entry?.value]);
  }
  if (typeof infobox === 'object') return Object.entries(infobox);
  problems.push('"infobox" must be an object of attribute → value');
  return [];
}

/**
 * Validates a whole snapshot: every article well-formed, no id twice. Throws with every problem
 * found, in line order with those met while reading it (`readProblems`), each once.
 */
export function checkArticles(raws: Array<{ value: unknown; line: number }>, source: string, readProblems: readonly InputProblem[] = []): ArticleInput[] {
  const problems: InputProblem[] = [...readProblems];
  const articles: ArticleInput[] = [];
  const firstLineOfId = new Map<string, number>();
  for (const { value, line } of raws) {
    const article = checkArticle(value);
    if (Array.isArray(article)) {
      problems.push(...article.map((message) => ({ source, line, message })));
      continue;
    }
    const seenAt = firstLineOfId.get(article.id);
    if (seenAt !== undefined) {
      problems.push({ source, line, message: `article ${quoteInput(article.id)} appears twice (first at line ${seenAt})` });
      continue;
    }
    firstLineOfId.set(article.id, line);
    articles.push(article);
  }
  if (articles.length === 0 && problems.length === 0) problems.push({ source, line: 1, message: 'no articles' });
  if (problems.length > 0) throw new InvalidSnapshotError(problems.sort((a, b) => a.line - b.line));
  return articles;
}

/** Reads a JSON Lines snapshot file completely and validates it before anything is written. */
export async function readSnapshotFile(path: string): Promise<ArticleInput[]> {
  const { source, parsed, problems } = await readJsonLines(path);
  return checkArticles(parsed, source, problems);
}
