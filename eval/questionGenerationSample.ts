/**
 * A look at the local question generator on text nobody here wrote: SQuAD's paragraphs, each
 * split into sentences and drafted from as a NEW paragraph, with a seeded random sample of the
 * drafts to read by hand and the shares of wh-questions and clozes.
 */
import { LocalQuestionGenerator } from '../src/benchmarks/localQuestions.js';
import type { DraftQuestion } from '../src/benchmarks/types.js';
import { readJsonLines } from '../src/ingest/jsonLines.js';
import { splitSentences } from '../src/ingest/sentenceSplitter.js';
import { seededRandom } from '../src/learning/random.js';

export interface SampledQuestion extends DraftQuestion {
  title: string;
  sentence: string;
}

export interface QuestionGenerationSample {
  paragraphs: number;
  questions: number;
  /** Drafts by form ('wh', 'cloze') and by the wh-phrase's first word ("When", "Who", "How" …). */
  byForm: Record<string, number>;
  byWhWord: Record<string, number>;
  sample: SampledQuestion[];
}

interface SquadLine {
  context: Array<{ title: string; text: string }>;
}

/** Drafts questions from the first `paragraphs` distinct paragraphs of a SQuAD-style JSON Lines file and draws `sampleSize` of them. */
export async function sampleQuestionGeneration(
  path: string,
  options: { paragraphs: number; sampleSize: number; seed: number },
): Promise<QuestionGenerationSample> {
  const { parsed } = await readJsonLines(path);
  const seen = new Set<string>();
  const paragraphs = parsed
    .flatMap(({ value }) => (value as SquadLine).context ?? [])
    .filter(({ text }) => !seen.has(text) && seen.add(text) !== undefined)
    .slice(0, options.paragraphs);
  const generator = new LocalQuestionGenerator();
  const drafted: SampledQuestion[] = [];
  for (const { title, text } of paragraphs) {
    const sentences = splitSentences(text).map((sentence) => ({ text: sentence.text }));
    for (const draft of await generator.questions({ title, sentences, type: 'NEW' }))
      drafted.push({ ...draft, title, sentence: sentences[draft.evidence[0]!]!.text });
  }
  const count = (keys: string[]): Record<string, number> =>
    keys.reduce<Record<string, number>>((counts, key) => ({ ...counts, [key]: (counts[key] ?? 0) + 1 }), {});
  const wh = drafted.filter((draft) => draft.form === 'wh');
  const random = seededRandom(options.seed);
  const pool = [...drafted];
  const sample: SampledQuestion[] = [];
  while (sample.length < options.sampleSize && pool.length > 0) sample.push(pool.splice(Math.floor(random() * pool.length), 1)[0]!);
  return {
    paragraphs: paragraphs.length,
    questions: drafted.length,
    byForm: count(drafted.map((draft) => draft.form)),
    byWhWord: count(wh.map((draft) => draft.question.replace(/^\((?:[^()]|\([^()]*\))*\)\s*/, '').split(' ')[0]!)),
    sample,
  };
}
