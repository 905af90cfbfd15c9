/**
 * Training data for the reader's head: for every question of a QA file with gold paragraphs,
 * the encoder's word states of the paragraph and of the question, the word features, and where
 * the gold answers occur (word spans). Computed by the product's own code (the reader's encoder
 * and features), so the head is trained on exactly what it will see; written as float32 files
 * and one JSON index that eval/reader/train_reader.py reads.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { analyseQuestion } from '../../src/qa/question.js';
import { MAX_PASSAGE_WORDS, MAX_SPAN_WORDS } from '../../src/qa/reader/spanReader.js';
import { openWordEncoder } from '../../src/qa/reader/wordEncoder.js';
import { QUESTION_FEATURES, questionFeatures, readerPassage, WORD_FEATURES, wordFeatures, type ReaderPassage } from '../../src/qa/reader/wordFeatures.js';
import type { OnnxEmbedder } from '../../src/embedding/onnx.js';
import { ensurePretrainedModel } from '../../src/embedding/pretrained.js';
import type { PretrainedModelName } from '../../src/embedding/types.js';
import type { QaItem } from '../qaFile.js';
import { normalizeAnswer } from '../../src/text/normalize.js';

/** Every word span (first and last word, inclusive) of the passage whose text is a gold answer under SQuAD's normalisation. */
export function goldSpans(passage: ReaderPassage, answers: readonly string[]): Array<[number, number]> {
  const wanted = new Set(answers.map(normalizeAnswer).filter((answer) => answer !== ''));
  const spans: Array<[number, number]> = [];
  for (let from = 0; from < passage.words.length; from++) {
    let text = '';
    for (let to = from; to < Math.min(passage.words.length, from + MAX_SPAN_WORDS); to++) {
      if (passage.sentenceOf[to] !== passage.sentenceOf[from]) break;
      text += (to === from ? '' : passage.words[to]!.space) + passage.words[to]!.text;
      if (wanted.has(normalizeAnswer(text))) spans.push([from, to]);
    }
  }
  return spans;
}

/** The reader's encoder (e5-small-v2, BERT's shape) has this many layers. */
export const ENCODER_LAYERS = 12;

/** The name of a layer's output inside the encoder's ONNX graph (its last LayerNorm's sum, as the export named it). */
export function layerOutput(layer: number): string {
  return `/encoder/layer.${layer}/output/LayerNorm/Add_1_output_0`;
}

class FloatFile {
  private readonly stream: WriteStream;
  values = 0;

  /** The stream's first error (a full disk): the next write or the close throws it, where it would otherwise crash the process. */
  private failure: Error | null = null;

  constructor(path: string) {
    this.stream = createWriteStream(path);
    this.stream.on('error', (error) => (this.failure ??= error));
  }

  async write(data: Float32Array): Promise<void> {
    if (this.failure) throw this.failure;
    this.values += data.length;
    // once() rejects if the stream fails while waiting, so a failed write never hangs here.
    if (!this.stream.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength))) await once(this.stream, 'drain');
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) =>
      this.stream.end((error?: Error | null) => {
        const failed = error ?? this.failure;
        if (failed) reject(failed);
        else resolve();
      }),
    );
  }
}

/**
 * One text's word-piece states at the word layer and at the last layer, so the training script
 * can check that its copy of the encoder's top layers turns the one into the other.
 */
async function writeEncoderCheck(model: OnnxEmbedder, wordLayer: string, text: string, dir: string): Promise<void> {
  const ids = model.encode(text, 'passage');
  const { data, inner } = await model.tokenStates([ids]);
  await writeFile(
    join(dir, 'encoder-check.json'),
    JSON.stringify({ wordLayer, pieces: ids.length, from: Array.from(inner[wordLayer]!), to: Array.from(data) }),
  );
}

export interface PreparedSplit {
  name: string;
  questions: number;
  withGold: number;
  passages: number;
}

/** Writes `<dir>/<name>.json` and its float32 files for the items (each with its gold paragraph). */
export async function prepareReaderData(
  items: readonly QaItem[],
  options: {
    dir: string;
    name: string;
    encoder: PretrainedModelName;
    /** The encoder's inner tensor to take word states from; the last layer when absent. */
    wordLayer?: string;
    /** With a word layer, also write encoder-check.json from this split's first passage (one split is enough). */
    encoderCheck?: boolean;
    modelsDir: string;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<PreparedSplit> {
  await mkdir(options.dir, { recursive: true });
  const settings = await ensurePretrainedModel(options.encoder, options.modelsDir);
  const { model, encoder } = await openWordEncoder(options.encoder, settings, { cacheBytes: 1, wordLayer: options.wordLayer });
  const file = (suffix: string): FloatFile => new FloatFile(join(options.dir, `${options.name}.${suffix}.f32`));
  const files = { passages: file('passages'), questions: file('questions'), features: file('features'), questionFeatures: file('qfeatures') };
  const passageIndex = new Map<string, number>();
  const passageWords: Array<{ words: string[]; spaces: string[]; sentences: number[]; isWord: boolean[] }> = [];
  const index: Array<{ id: string; passage: number; questionWords: number; gold: Array<[number, number]>; answers: string[] }> = [];
  try {
    for (const [n, item] of items.entries()) {
      const text = item.documents[0]?.text;
      if (!text) continue;
      const passage = readerPassage(text, MAX_PASSAGE_WORDS);
      const question = analyseQuestion(item.question);
      const questionWords = question.tokens.map((token) => token.text);
      if (passage.words.length === 0 || questionWords.length === 0) continue;
      let p = passageIndex.get(text);
      if (p === undefined) {
        p = passageWords.length;
        passageIndex.set(text, p);
        passageWords.push({
          words: passage.words.map((word) => word.text),
          spaces: passage.words.map((word) => word.space),
          sentences: [...passage.sentenceOf],
          isWord: passage.words.map((word) => /[\p{L}\p{N}]/u.test(word.text)),
        });
        const [states] = await encoder.passagesOf([{ text, words: passage.words.map((word) => word.text) }]);
        await files.passages.write(states!.data);
      }
      const [questionStates] = await encoder.questions([questionWords]);
      await files.questions.write(questionStates!.data);
      await files.features.write(wordFeatures(question, passage));
      await files.questionFeatures.write(questionFeatures(question));
      index.push({ id: String(n), passage: p, questionWords: questionWords.length, gold: goldSpans(passage, item.answers), answers: item.answers });
      options.onProgress?.(n + 1, items.length);
    }
    if (options.encoderCheck && options.wordLayer && passageWords.length > 0)
      await writeEncoderCheck(model, options.wordLayer, passageWords[0]!.words.join(' '), options.dir);
  } finally {
    await Promise.all(Object.values(files).map((f) => f.close()));
    await model.close();
  }
  await writeFile(
    join(options.dir, `${options.name}.json`),
    JSON.stringify({
      encoder: options.encoder,
      encoderPath: settings.modelPath,
      wordLayer: options.wordLayer ?? null,
      dimension: encoder.dimension,
      wordFeatures: WORD_FEATURES,
      questionFeatures: QUESTION_FEATURES,
      maxSpanWords: MAX_SPAN_WORDS,
      passages: passageWords,
      items: index,
    }),
  );
  return { name: options.name, questions: index.length, withGold: index.filter((item) => item.gold.length > 0).length, passages: passageWords.length };
}
