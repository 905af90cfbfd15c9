/**
 * A local sentence-transformer exported to ONNX, run by onnxruntime-node.
 *
 * onnxruntime-node is an optional dependency that ChronoQL does not install (its postinstall
 * downloads CUDA files and fails offline). Install it yourself:
 *
 *   ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node
 *
 * and run with ORT_DISABLE_TELEMETRY=1 (set here when unset). The model directory holds
 * `model.onnx` (or `onnx/model.onnx`, as Hugging Face repositories lay it out) and
 * `tokenizer.json` (a WordPiece tokenizer, see wordpiece.ts). The model's token outputs
 * (`last_hidden_state` / `token_embeddings`, batch × tokens × hidden) are mean-pooled over the
 * attention mask; a model that outputs a pooled `sentence_embedding` (batch × hidden) is used
 * as is. Rows are L2-normalised.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { EmbedderConfigError, type Embedder, type OnnxEmbedderConfig } from './types.js';
import { normalizeRows } from './vectors.js';
import { WordPieceTokenizer } from './wordpiece.js';

export const ONNX_INSTALL_HINT = 'ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node';

/** The parts of onnxruntime-node's API used here. */
interface OrtTensor {
  readonly dims: readonly number[];
  readonly data: unknown;
}
interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release?(): Promise<void>;
}
export interface OrtModule {
  Tensor: new (type: 'int64', data: BigInt64Array, dims: readonly number[]) => OrtTensor;
  InferenceSession: { create(path: string, options?: Record<string, unknown>): Promise<OrtSession> };
}

/** Imports onnxruntime-node, or explains how to install it. */
export async function importOnnxRuntime(): Promise<OrtModule> {
  process.env.ORT_DISABLE_TELEMETRY ??= '1';
  const name = 'onnxruntime-node';
  try {
    const loaded = (await import(name)) as OrtModule & { default?: OrtModule };
    return loaded.InferenceSession ? loaded : loaded.default!;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new EmbedderConfigError(
        `the onnx embedder needs the optional package onnxruntime-node, which is not installed. Install it in the ChronoQL directory with\n` +
          `  ${ONNX_INSTALL_HINT}\n` +
          `(the variable skips its CUDA download, which fails offline) and run with ORT_DISABLE_TELEMETRY=1.`,
      );
    }
    throw new EmbedderConfigError(`cannot load onnxruntime-node: ${(error as Error).message}`);
  }
}

/** model.onnx inside `modelDir` (also accepts the Hugging Face layout onnx/model.onnx). */
export function findOnnxModel(modelDir: string): string {
  for (const candidate of ['model.onnx', join('onnx', 'model.onnx')]) {
    const path = join(modelDir, candidate);
    if (existsSync(path)) return path;
  }
  throw new EmbedderConfigError(`the onnx embedder found no model.onnx (or onnx/model.onnx) in ${modelDir}`);
}

export class OnnxEmbedder implements Embedder {
  private knownDimension: number | undefined;
  private closed = false;

  constructor(
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
    readonly tokenizer: WordPieceTokenizer,
    private readonly name: string,
    readonly batchSize: number,
    private readonly idOverride?: string,
  ) {}

  get dimension(): number {
    if (this.knownDimension === undefined) throw new EmbedderConfigError('onnx embedder: dimension is not known yet');
    return this.knownDimension;
  }

  get id(): string {
    return this.idOverride ?? `onnx:${this.name}@${this.dimension}d`;
  }

  async embed(texts: readonly string[]): Promise<Float32Array> {
    if (this.closed) throw new Error('onnx embedder: closed');
    texts.forEach((text, i) => {
      if (typeof text !== 'string') throw new TypeError(`embed: texts[${i}] is not a string`);
    });
    const parts: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) parts.push(await this.run(texts.slice(start, start + this.batchSize)));
    if (texts.length === 0) return new Float32Array(0);
    const d = this.dimension;
    const out = new Float32Array(texts.length * d);
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return normalizeRows(out, d);
  }

  /** One batch through the model, pooled (not yet normalised). */
  private async run(batch: readonly string[]): Promise<Float32Array> {
    const encodings = batch.map((text) => this.tokenizer.encode(text));
    const length = Math.max(...encodings.map((e) => e.ids.length));
    const n = batch.length;
    const ids = new BigInt64Array(n * length).fill(BigInt(this.tokenizer.padId));
    const mask = new BigInt64Array(n * length);
    const types = new BigInt64Array(n * length);
    encodings.forEach((encoding, row) => {
      encoding.ids.forEach((id, k) => {
        ids[row * length + k] = BigInt(id);
        mask[row * length + k] = 1n;
        types[row * length + k] = BigInt(encoding.typeIds[k]!);
      });
    });
    const available: Record<string, BigInt64Array> = { input_ids: ids, attention_mask: mask, token_type_ids: types };
    const feeds: Record<string, OrtTensor> = {};
    for (const input of this.session.inputNames) {
      const data = available[input];
      if (!data) throw new EmbedderConfigError(`onnx embedder: the model wants an input "${input}" (only input_ids, attention_mask, token_type_ids are known)`);
      feeds[input] = new this.ort.Tensor('int64', data, [n, length]);
    }
    const outputs = await this.session.run(feeds);
    const names = this.session.outputNames;
    const pick = (wanted: string[], rank: number): OrtTensor | undefined => {
      for (const name of wanted) if (outputs[name]?.dims.length === rank) return outputs[name];
      for (const name of names) if (outputs[name]?.dims.length === rank) return outputs[name];
      return undefined;
    };
    const tokens = pick(['last_hidden_state', 'token_embeddings'], 3);
    const pooled = tokens ? undefined : pick(['sentence_embedding', 'pooler_output'], 2);
    const tensor = tokens ?? pooled;
    if (!tensor) throw new EmbedderConfigError(`onnx embedder: the model outputs (${names.join(', ')}) include no batch × tokens × hidden or batch × hidden tensor`);
    const data = tensor.data;
    if (!(data instanceof Float32Array)) throw new EmbedderConfigError('onnx embedder: the model output is not float32');
    const hidden = tensor.dims[tensor.dims.length - 1]!;
    if (this.knownDimension !== undefined && hidden !== this.knownDimension) {
      throw new EmbedderConfigError(`onnx embedder: the model produced ${hidden} dimensions, earlier ${this.knownDimension}`);
    }
    this.knownDimension = hidden;
    if (!tokens) return Float32Array.from(data.subarray(0, n * hidden));
    // Mean pooling over the tokens the attention mask keeps.
    const steps = tensor.dims[1]!;
    const out = new Float32Array(n * hidden);
    const sum = new Float64Array(hidden);
    for (let row = 0; row < n; row++) {
      sum.fill(0);
      let count = 0;
      for (let k = 0; k < Math.min(steps, length); k++) {
        if (mask[row * length + k] === 0n) continue;
        count++;
        const base = (row * steps + k) * hidden;
        for (let j = 0; j < hidden; j++) sum[j] += data[base + j]!;
      }
      for (let j = 0; j < hidden; j++) out[row * hidden + j] = count > 0 ? sum[j]! / count : 0;
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.session.release?.();
  }
}

/**
 * Loads the tokenizer and the model, then learns the dimension from one probe text.
 * `ort` is for tests; by default onnxruntime-node is imported (see importOnnxRuntime).
 */
export async function createOnnxEmbedder(config: Omit<OnnxEmbedderConfig, 'kind'>, ort?: OrtModule): Promise<OnnxEmbedder> {
  if (!config.modelDir?.trim()) throw new EmbedderConfigError('the onnx embedder needs a model directory (CHRONOQL_ONNX_MODEL_DIR)');
  const modelDir = resolve(config.modelDir);
  if (!existsSync(modelDir)) throw new EmbedderConfigError(`the onnx model directory ${modelDir} does not exist`);
  const modelPath = findOnnxModel(modelDir);
  const tokenizerPath = join(modelDir, 'tokenizer.json');
  if (!existsSync(tokenizerPath)) throw new EmbedderConfigError(`the onnx embedder found no tokenizer.json in ${modelDir}`);
  let tokenizerJson: unknown;
  try {
    tokenizerJson = JSON.parse(await readFile(tokenizerPath, 'utf8'));
  } catch (error) {
    throw new EmbedderConfigError(`cannot read ${tokenizerPath}: ${(error as Error).message}`);
  }
  const tokenizer = new WordPieceTokenizer(tokenizerJson as ConstructorParameters<typeof WordPieceTokenizer>[0], { maxLength: config.maxLength });
  const batchSize = config.batchSize ?? 32;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new EmbedderConfigError(`onnx embedder: batchSize must be a positive integer, got ${batchSize}`);
  const runtime = ort ?? (await importOnnxRuntime());
  const options: Record<string, unknown> = { graphOptimizationLevel: 'all' };
  if (config.threads !== undefined) options.intraOpNumThreads = config.threads;
  let session: OrtSession;
  try {
    session = await runtime.InferenceSession.create(modelPath, options);
  } catch (error) {
    throw new EmbedderConfigError(`onnxruntime cannot load ${modelPath}: ${(error as Error).message}`);
  }
  const embedder = new OnnxEmbedder(runtime, session, tokenizer, basename(modelDir), batchSize, config.id?.trim() || undefined);
  await embedder.embed(['dimension probe']);
  return embedder;
}
