/**
 * One request to an OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp
 * server, Ollama, LiteLLM), asking for token log-probabilities, which servers may or may not
 * return. Used by the `openai` generator and by the optional contradiction verifier.
 */
import { openAiEndpoint } from './openaiEndpoint.js';

export interface ChatEndpointConfig {
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatReply {
  content: string;
  /** Token log-probabilities, empty when the server sent none. */
  logprobs: number[];
}

interface ChatCompletion {
  choices?: Array<{
    message?: { content?: unknown };
    logprobs?: { content?: Array<{ logprob?: unknown }> | null } | null;
  }>;
}

export class ChatConfigError extends Error {}
export class ChatRequestError extends Error {}

export class ChatClient {
  readonly url: string;

  constructor(
    private readonly config: ChatEndpointConfig,
    private readonly what: string,
  ) {
    if (!config.model) throw new ChatConfigError(`${what}: a model name is required`);
    const endpoint = openAiEndpoint(config.baseUrl, 'chat/completions');
    if ('problem' in endpoint) throw new ChatConfigError(`${what}: ${endpoint.problem}`);
    this.url = endpoint.url;
  }

  async complete(messages: readonly ChatMessage[], maxTokens: number): Promise<ChatReply> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.config.model, messages, temperature: 0, max_tokens: maxTokens, logprobs: true }),
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 60_000),
      });
    } catch (error) {
      throw new ChatRequestError(`${this.what}: ${this.url} could not be reached (${(error as Error).message})`);
    }
    if (!response.ok) throw new ChatRequestError(`${this.what}: ${this.url} answered ${response.status} ${(await response.text()).slice(0, 200)}`);
    const body = (await response.json().catch(() => null)) as ChatCompletion | null;
    const choice = body?.choices?.[0];
    if (typeof choice?.message?.content !== 'string') throw new ChatRequestError(`${this.what}: ${this.url} sent no choices[0].message.content`);
    const logprobs = (choice.logprobs?.content ?? []).map((token) => token.logprob).filter((value): value is number => typeof value === 'number');
    return { content: choice.message.content, logprobs };
  }
}
