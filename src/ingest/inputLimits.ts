import { PARAGRAPH_BREAK } from './sentenceSplitter.js';

/**
 * How large one article of a snapshot may be, checked before anything is written (README.md,
 * "Snapshot files"). An input Neo4j refuses mid-ingest would otherwise abort the snapshot after
 * some of its batches committed.
 *
 * Neo4j refuses a string property in a range index above 8,164 bytes of UTF-8 ("Property value is
 * too large to index"; measured on the managed Neo4j 5 with ASCII, 3-byte and 4-byte characters:
 * 8,164, 2,721 × 3 and 2,041 × 4 bytes), and a composite key counts its parts together. Indexed
 * strings built from the input: Article.id and .title; every version id is the article id, the
 * attribute key (facts) and the snapshot id (at most 24 characters) joined by '#'; facts are also
 * indexed on (subject, attributeKey). Capping the id, the title and the attribute name at 2 KiB
 * each keeps the longest key (id + attribute + snapshot id) under 4.2 KiB: half the limit.
 */
export const MAX_ID_BYTES = 2048;
export const MAX_TITLE_BYTES = 2048;
export const MAX_ATTRIBUTE_BYTES = 2048;
/** Values are not range-indexed; the cap keeps one fact (and every answer quoting it) small. */
export const MAX_FACT_VALUE_BYTES = 16 * 1024;
/**
 * Each entry becomes a fact, a change event and their links, written in one transaction with its
 * batch; 250,000 entries ran out of Neo4j's transaction memory. Real infoboxes have under 200.
 */
export const MAX_INFOBOX_ENTRIES = 1000;
/**
 * Text is split and labelled paragraph by paragraph (blank lines part them), and a sentence
 * never crosses one: this bounds the longest sentence node.
 */
export const MAX_PARAGRAPH_BYTES = 256 * 1024;
/**
 * The whole article (id, title, text and infobox). The longest Wikipedia articles are under 1 MB
 * of text; a 30 MB one became 20,135 passages and 16 minutes of embedding. 2 MiB of text gives at
 * most about 1,400 passages of 1,500 characters.
 */
export const MAX_ARTICLE_BYTES = 2 * 1024 * 1024;

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');
const kib = (bytes: number): string => `${(bytes / 1024).toLocaleString('en-US', { maximumFractionDigits: 1 })} KiB`;

function tooLong(field: string, text: string, limit: number): string[] {
  const bytes = utf8Bytes(text);
  return bytes > limit ? [`${field} is ${bytes.toLocaleString('en-US')} bytes of UTF-8; at most ${limit.toLocaleString('en-US')} are allowed`] : [];
}

/** What about one article exceeds the limits above, one message per problem. */
export function sizeProblems(article: { id: string; title: string; text: string; infobox: Record<string, string> }): string[] {
  const entries = Object.entries(article.infobox);
  const problems: string[] = [];
  if (entries.length > MAX_INFOBOX_ENTRIES) {
    problems.push(`"infobox" has ${entries.length.toLocaleString('en-US')} entries; at most ${MAX_INFOBOX_ENTRIES.toLocaleString('en-US')} are allowed`);
  }
  const total =
    utf8Bytes(article.id) + utf8Bytes(article.title) + utf8Bytes(article.text) + entries.reduce((sum, [a, v]) => sum + utf8Bytes(a) + utf8Bytes(v), 0);
  if (total > MAX_ARTICLE_BYTES) {
    // Listing every oversized part of a 30 MB article as well would only repeat this.
    problems.push(
      `the article is ${kib(total)}; at most ${kib(MAX_ARTICLE_BYTES)} (id, title, text and infobox together) are allowed: split it into several articles`,
    );
    return problems;
  }
  problems.push(...tooLong('"id"', article.id, MAX_ID_BYTES));
  // A title left out is the id: one message for the two.
  if (article.title !== article.id) problems.push(...tooLong('"title"', article.title, MAX_TITLE_BYTES));
  if (entries.length <= MAX_INFOBOX_ENTRIES) {
    for (const [attribute, value] of entries) {
      const shown = attribute.length > 40 ? `${attribute.slice(0, 40)}…` : attribute;
      problems.push(...tooLong(`the "infobox" attribute name "${shown}"`, attribute, MAX_ATTRIBUTE_BYTES));
      problems.push(...tooLong(`"infobox"."${shown}"`, value, MAX_FACT_VALUE_BYTES));
    }
  }
  article.text.split(PARAGRAPH_BREAK).forEach((paragraph, index) => {
    problems.push(...tooLong(`paragraph ${index + 1} of "text"`, paragraph, MAX_PARAGRAPH_BYTES));
  });
  return problems;
}

/**
 * One transaction writes a batch of articles. Neo4j holds a transaction's writes in memory, up to
 * 70 % of its heap for all transactions together: with a 1 GiB heap, 60,000 infobox entries in
 * one transaction went in and 120,000 ran out (MemoryPoolOutOfMemoryError). A batch is cut
 * before it would pass either bound, so articles at the limits above go in a few at a time.
 */
export const MAX_BATCH_BYTES = 8 * 1024 * 1024;
export const MAX_BATCH_INFOBOX_ENTRIES = 20_000;

/** The articles in order, in batches of at most `maxArticles` and the bounds above (an article alone may pass them). */
export function* transactionBatches<T extends { id: string; title: string; text: string; infobox: Record<string, string> }>(
  articles: readonly T[],
  maxArticles: number,
): Generator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  let entries = 0;
  for (const article of articles) {
    const size = utf8Bytes(article.id) + utf8Bytes(article.title) + utf8Bytes(article.text);
    const count = Object.keys(article.infobox).length;
    if (batch.length > 0 && (batch.length >= maxArticles || bytes + size > MAX_BATCH_BYTES || entries + count > MAX_BATCH_INFOBOX_ENTRIES)) {
      yield batch;
      batch = [];
      bytes = 0;
      entries = 0;
    }
    batch.push(article);
    bytes += size;
    entries += count;
  }
  if (batch.length > 0) yield batch;
}
