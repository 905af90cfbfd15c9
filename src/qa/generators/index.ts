import type { SpanReader } from '../reader/spanReader.js';
import { ExtractiveGenerator } from './extractive.js';
import type { ChatEndpointConfig } from '../../platform/openaiChat.js';
import { OpenAIGenerator } from './openai.js';
import { GeneratorConfigError, type Generator } from './types.js';

export type * from './types.js';
export { GeneratorConfigError, GeneratorRequestError } from './types.js';

export const DEFAULT_GENERATOR = 'extractive';

/**
 * The generators this process can use: `extractive` (the reader) always; `openai` when
 * CHRONOQL_GENERATOR_BASE_URL and CHRONOQL_GENERATOR_MODEL are set (nothing calls out otherwise).
 */
export class GeneratorRegistry {
  private readonly generators = new Map<string, Generator>();

  constructor(reader: SpanReader, chat: ChatEndpointConfig | null) {
    this.generators.set('extractive', new ExtractiveGenerator(reader));
    if (chat) this.generators.set('openai', new OpenAIGenerator(chat));
  }

  get names(): string[] {
    return [...this.generators.keys()];
  }

  get(name: string | null | undefined): Generator {
    const generator = this.generators.get(name ?? DEFAULT_GENERATOR);
    if (generator) return generator;
    const hint = name === 'openai' ? ' (set CHRONOQL_GENERATOR_BASE_URL and CHRONOQL_GENERATOR_MODEL)' : '';
    throw new GeneratorConfigError(`generator '${name}' is not available${hint}; available: ${this.names.join(', ')}`);
  }
}
