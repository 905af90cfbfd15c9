/**
 * A sentence encoder exported to ONNX (a BERT-family transformer), run by onnxruntime-node with
 * its Hugging Face `tokenizer.json` read by @huggingface/tokenizers. Token outputs
 * (`last_hidden_state`, batch × tokens × hidden) are mean-pooled over the attention mask or
 * reduced to the [CLS] token, as the model was trained; rows are L2-normalised. Models such as
 * e5 were trained with a prefix before queries and another before passages: the embedder adds
 * them by the role of each text.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import ort from 'onnxruntime-node';
import { withGraphOutputs } from './graphOutputs.js';
import { EmbedderConfigError, type Embedder, type OnnxEmbedderConfig, type TextRole } from './types.js';
import { normalizeRows } from './vectors.js';

/** BERT's position table: no model of this family reads more tokens. */
const DEFAULT_MAX_TOKENS = 512;

/** model.onnx and tokenizer.json of a directory laid out as Hugging Face repositories are. */
export function onnxModelFiles(modelDir: string): { modelPath: string; tokenizerPath: string; name: string } {
  const directory = resolve(modelDir);
  if (!existsSync(directory)) throw new EmbedderConfigError(`the onnx model directory ${directory} does not exist`);
  const modelPath = ['model.onnx', join('onnx', 'model.onnx')].map((file) => join(directory, file)).find((path) => existsSync(path));
  if (!modelPath) throw new EmbedderConfigError(`the onnx embedder found no model.onnx (or onnx/model.onnx) in ${directory}`);
  return { modelPath, tokenizerPath: join(directory, 'tokenizer.json'), name: basename(directory) };
}

export class OnnxEmbedder implements Embedder {
  readonly id: string;
  private closed = false;

  constructor(
    private readonly session: ort.InferenceSession,
    readonly tokenizer: Tokenizer,
    readonly dimension: number,
    private readonly settings: Required<
      Pick<OnnxEmbedderConfig, 'name' | 'pooling' | 'queryPrefix' | 'passagePrefix' | 'maxLength' | 'batchSize' | 'innerOutputs'>
    > & {
      id?: string;
    },
  ) {
    this.id = settings.id ?? `onnx:${settings.name}@${dimension}d`;
  }

  /** Token ids of one text as the model sees it: prefix added, cut to the model's length with [SEP] kept last. */
  encode(text: string, role: TextRole): number[] {
    const prefix = role === 'query' ? this.settings.queryPrefix : this.settings.passagePrefix;
    const ids = this.tokenizer.encode(prefix + text).ids;
    const max = this.settings.maxLength;
    return ids.length <= max ? ids : [...ids.slice(0, max - 1), ids[ids.length - 1]!];
  }

  async embed(texts: readonly string[], role: TextRole = 'passage'): Promise<Float32Array> {
    if (this.closed) throw new Error('onnx embedder: closed');
    texts.forEach((text, i) => {
      if (typeof text !== 'string') throw new TypeError(`embed: texts[${i}] is not a string`);
    });
    const out = new Float32Array(texts.length * this.dimension);
    for (let start = 0; start < texts.length; start += this.settings.batchSize) {
      const batch = texts.slice(start, start + this.settings.batchSize).map((text) => this.encode(text, role));
      out.set(await this.run(batch), start * this.dimension);
    }
    return normalizeRows(out, this.dimension);
  }

  /** One padded batch through the model, pooled (not yet normalised). */
  private async run(batch: number[][]): Promise<Float32Array> {
    const { data, length } = await this.tokenStates(batch);
    const n = batch.length;
    const hidden = this.dimension;
    const out = new Float32Array(n * hidden);
    for (let row = 0; row < n; row++) {
      const count = this.settings.pooling === 'cls' ? 1 : batch[row]!.length;
      for (let k = 0; k < count; k++) {
        const base = (row * length + k) * hidden;
        for (let j = 0; j < hidden; j++) out[row * hidden + j]! += data[base + j]! / count;
      }
    }
    return out;
  }

  /**
   * The model's contextual state of every token of a padded batch of token-id sequences
   * (batch × length × hidden, row-major; `length` is the longest sequence), and the same of
   * each inner tensor the embedder was opened with. Padding rows are masked out of attention,
   * so each sequence's states are its own.
   */
  async tokenStates(batch: readonly number[][]): Promise<{ data: Float32Array; length: number; inner: Record<string, Float32Array> }> {
    if (this.closed) throw new Error('onnx embedder: closed');
    const length = Math.max(...batch.map((ids) => ids.length));
    const n = batch.length;
    const ids = new BigInt64Array(n * length);
    const mask = new BigInt64Array(n * length);
    batch.forEach((tokens, row) =>
      tokens.forEach((id, k) => {
        ids[row * length + k] = BigInt(id);
        mask[row * length + k] = 1n;
      }),
    );
    const available: Record<string, BigInt64Array> = { input_ids: ids, attention_mask: mask, token_type_ids: new BigInt64Array(n * length) };
    const feeds: Record<string, ort.Tensor> = {};
    for (const input of this.session.inputNames) {
      const data = available[input];
      if (!data) throw new EmbedderConfigError(`onnx embedder: the model wants an input "${input}" (only input_ids, attention_mask, token_type_ids are known)`);
      feeds[input] = new ort.Tensor('int64', data, [n, length]);
    }
    const outputs = await this.session.run(feeds);
    const tokens = outputs.last_hidden_state ?? outputs.token_embeddings;
    if (!tokens || tokens.dims.length !== 3 || !(tokens.data instanceof Float32Array)) {
      throw new EmbedderConfigError(
        `onnx embedder: the model outputs (${this.session.outputNames.join(', ')}) include no float32 batch × tokens × hidden tensor`,
      );
    }
    const inner: Record<string, Float32Array> = {};
    for (const name of this.settings.innerOutputs) {
      const states = outputs[name];
      if (!states || !(states.data instanceof Float32Array) || states.data.length !== tokens.data.length) {
        throw new EmbedderConfigError(`onnx embedder: the inner tensor "${name}" is not a float32 batch × tokens × hidden tensor`);
      }
      inner[name] = states.data;
    }
    return { data: tokens.data, length, inner };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.session.release();
  }
}

/** Loads the tokenizer and the model; the dimension is read from the model's output shape, or from one probe text. */
export async function createOnnxEmbedder(config: Omit<OnnxEmbedderConfig, 'kind'>): Promise<OnnxEmbedder> {
  const { modelPath, tokenizerPath } = config;
  if (!existsSync(modelPath)) throw new EmbedderConfigError(`the onnx embedder found no model at ${modelPath}`);
  if (!existsSync(tokenizerPath)) throw new EmbedderConfigError(`the onnx embedder found no tokenizer at ${tokenizerPath}`);
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(JSON.parse(await readFile(tokenizerPath, 'utf8')) as object, {});
  } catch (error) {
    throw new EmbedderConfigError(`cannot read the tokenizer ${tokenizerPath}: ${(error as Error).message}`);
  }
  const batchSize = config.batchSize ?? 1;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new EmbedderConfigError(`onnx embedder: batchSize must be a positive integer, got ${batchSize}`);
  const innerOutputs = config.innerOutputs ?? [];
  let session: ort.InferenceSession;
  try {
    const options: ort.InferenceSession.SessionOptions = {
      graphOptimizationLevel: 'all',
      ...(config.threads === undefined ? {} : { intraOpNumThreads: config.threads, interOpNumThreads: 1 }),
      // Spinning threads would take the cores Neo4j and the other embedder need.
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    };
    session =
      innerOutputs.length === 0
        ? await ort.InferenceSession.create(modelPath, options)
        : await ort.InferenceSession.create(withGraphOutputs(await readFile(modelPath), innerOutputs), options);
  } catch (error) {
    throw new EmbedderConfigError(`onnxruntime cannot load ${modelPath}: ${(error as Error).message}`);
  }
  const settings = {
    name: config.name,
    pooling: config.pooling ?? 'mean',
    queryPrefix: config.queryPrefix ?? '',
    passagePrefix: config.passagePrefix ?? '',
    maxLength: config.maxLength ?? DEFAULT_MAX_TOKENS,
    batchSize,
    innerOutputs,
    id: config.id?.trim() || undefined,
  };
  // One empty text ([CLS] [SEP]) shows the width of the model's output.
  const probeIds = tokenizer.encode('').ids;
  const probeValues: Record<string, number[]> = { input_ids: probeIds, attention_mask: probeIds.map(() => 1) };
  const probe = await session.run(
    Object.fromEntries(
      session.inputNames.map((input) => {
        const values = probeValues[input] ?? probeIds.map(() => 0);
        return [input, new ort.Tensor('int64', BigInt64Array.from(values, BigInt), [1, values.length])];
      }),
    ),
  );
  const hidden = (probe.last_hidden_state ?? probe.token_embeddings)?.dims[2];
  if (typeof hidden !== 'number') throw new EmbedderConfigError(`onnx embedder: ${modelPath} has no last_hidden_state or token_embeddings output`);
  return new OnnxEmbedder(session, tokenizer, hidden, settings);
}
