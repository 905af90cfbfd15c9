/**
 * A generator on any OpenAI-compatible chat-completions endpoint (`POST {baseUrl}/v1/chat/completions`:
 * OpenAI, vLLM, llama.cpp server, Ollama, LiteLLM). It asks for token log-probabilities; when
 * the server returns them, the confidence is the mean token probability, otherwise 0.5.
 */
import { isoDay } from '../../domain/time.js';
import { ChatClient, ChatRequestError, type ChatEndpointConfig } from '../../platform/openaiChat.js';
import { MAX_ANSWER_TOKENS } from '../../text/annotation.js';
import { GeneratorConfigError, GeneratorRequestError, type Generation, type GenerationInput, type Generator } from './types.js';

export interface OpenAIGeneratorConfig extends ChatEndpointConfig {
  /** Requests in flight at once (default 8). */
  concurrency?: number;
}

const SYSTEM_PROMPT =
  `Answer the question with a short phrase of at most ${MAX_ANSWER_TOKENS} words and nothing else. ` +
  'When a document is given, answer from the document as of its date.';

/** The first MAX_ANSWER_TOKENS words of a reply, without a trailing period. */
function trimAnswer(content: string): string {
  return content
    .trim()
    .split(/\s+/)
    .slice(0, MAX_ANSWER_TOKENS)
    .join(' ')
    .replace(/[.\s]+$/, '');
}

export class OpenAIGenerator implements Generator {
  readonly name = 'openai';
  private readonly client: ChatClient;

  constructor(private readonly config: OpenAIGeneratorConfig) {
    try {
      this.client = new ChatClient(config, 'openai generator');
    } catch (error) {
      throw new GeneratorConfigError((error as Error).message);
    }
  }

  async generate(inputs: readonly GenerationInput[]): Promise<Generation[]> {
    const results = new Array<Generation>(inputs.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < inputs.length) {
        const i = next++;
        results[i] = await this.complete(inputs[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.config.concurrency ?? 8, inputs.length) }, worker));
    return results;
  }

  private async complete(input: GenerationInput): Promise<Generation> {
    const document = input.evidence;
    const user = document
      ? `Document (valid from ${isoDay(document.validFrom)}):\n${document.text}\n\nQuestion: ${input.question.text}`
      : `Question: ${input.question.text}`;
    try {
      const { content, logprobs } = await this.client.complete(
        [
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: user },
        ],
        32,
      );
      const confidence = logprobs.length === 0 ? 0.5 : Math.exp(logprobs.reduce((a, b) => a + b, 0) / logprobs.length);
      return { answer: trimAnswer(content), confidence, score: null };
    } catch (error) {
      throw error instanceof ChatRequestError ? new GeneratorRequestError(error.message) : error;
    }
  }
}
