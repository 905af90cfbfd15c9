/**
 * A generator on any OpenAI-compatible chat-completions endpoint (`POST {baseUrl}/v1/chat/completions`:
 * OpenAI, vLLM, llama.cpp server, Ollama, LiteLLM). It asks for token log-probabilities; when
 * the server returns them, the confidence is the mean token probability, otherwise 0.5.
 */
import { isoDay } from '../../graph/temporal.js';
import { openAiEndpoint } from '../../tools/openaiEndpoint.js';
import { MAX_ANSWER_TOKENS } from '../../text/annotation.js';
import { GeneratorConfigError, GeneratorRequestError, type Generation, type GenerationInput, type Generator } from './types.js';

export interface OpenAIGeneratorConfig {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  timeoutMs?: number;
}

interface ChatCompletion {
  choices?: Array<{
    message?: { content?: unknown };
    logprobs?: { content?: Array<{ logprob?: unknown }> | null } | null;
  }>;
}

const SYSTEM_PROMPT =
  `Answer the question with a short phrase of at most ${MAX_ANSWER_TOKENS} words and nothing else. ` +
  'When a document is given, answer from the document as of its date.';

export function chatCompletionsUrl(baseUrl: string): string {
  const endpoint = openAiEndpoint(baseUrl, 'chat/completions');
  if ('problem' in endpoint) throw new GeneratorConfigError(`openai generator: ${endpoint.problem}`);
  return endpoint.url;
}

/** The first MAX_ANSWER_TOKENS words of a reply, without a trailing period. */
function trimAnswer(content: string): string {
  return content.trim().split(/\s+/).slice(0, MAX_ANSWER_TOKENS).join(' ').replace(/[.\s]+$/, '');
}

export class OpenAIGenerator implements Generator {
  readonly name = 'openai';
  private readonly url: string;

  constructor(private readonly config: OpenAIGeneratorConfig) {
    if (!config.model) throw new GeneratorConfigError('openai generator: a model name is required');
    this.url = chatCompletionsUrl(config.baseUrl);
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
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}) },
        body: JSON.stringify({
          model: this.config.model,
          messages: [
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: user },
          ],
          temperature: 0,
          max_tokens: 32,
          logprobs: true,
        }),
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 60_000),
      });
    } catch (error) {
      throw new GeneratorRequestError(`openai generator: ${this.url} could not be reached (${(error as Error).message})`);
    }
    if (!response.ok) throw new GeneratorRequestError(`openai generator: ${this.url} answered ${response.status} ${(await response.text()).slice(0, 200)}`);
    const body = (await response.json().catch(() => null)) as ChatCompletion | null;
    const choice = body?.choices?.[0];
    if (typeof choice?.message?.content !== 'string') throw new GeneratorRequestError(`openai generator: ${this.url} sent no choices[0].message.content`);
    const logprobs = (choice.logprobs?.content ?? []).map((token) => token.logprob).filter((value): value is number => typeof value === 'number');
    const confidence = logprobs.length === 0 ? 0.5 : Math.exp(logprobs.reduce((a, b) => a + b, 0) / logprobs.length);
    return { answer: trimAnswer(choice.message.content), confidence };
  }
}
