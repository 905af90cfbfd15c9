import type { QaItem } from '../eval/qaFile.js';
import type { ArticleInput } from '../src/ingest/snapshotReader.js';

/**
 * Questions from infobox facts with DynaQuest's per-attribute template ("What is the
 * {attribute} of {page}?"), kept only when the value is stated in the article's text so
 * that retrieval can find it. One item per fact of each snapshot, asked as of its date.
 */
export function factQuestions(articles: readonly ArticleInput[], takenAt: Date): QaItem[] {
  return articles.flatMap((article) =>
    Object.entries(article.infobox)
      .filter(([, value]) => value.length > 1 && article.text.includes(value))
      .map(([attribute, value]) => ({
        question: `What is the ${attribute.toLowerCase()} of ${article.title}?`,
        answers: [value],
        context: [article.id],
        documents: [],
        asOf: takenAt,
        type: null,
        previousAnswers: [],
      })),
  );
}
