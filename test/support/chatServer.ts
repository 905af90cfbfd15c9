/**
 * A local server that speaks the chat-completions wire protocol (POST /v1/chat/completions →
 * a chat.completion object), so the code under test makes real HTTP requests. It records what
 * each request carried and answers with what the test's reply function says.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatServerRequest {
  url: string;
  authorization: string | undefined;
  /** The request's JSON body: {model, messages, ...}. */
  body: any;
}

/** A reply: the assistant's content (with token log-probabilities if given), or an HTTP failure. */
export type ChatServerReply = { content: string; logprobs?: number[] } | { status: number; text: string };

export interface ChatServer {
  /** What a client takes as its base URL (the server adds /v1/chat/completions). */
  baseUrl: string;
  requests: ChatServerRequest[];
  close(): Promise<void>;
}

export async function startChatServer(reply: (request: ChatServerRequest) => ChatServerReply): Promise<ChatServer> {
  const requests: ChatServerRequest[] = [];
  const server = createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}` } }));
      return;
    }
    const recorded: ChatServerRequest = { url: request.url, authorization: request.headers.authorization, body: JSON.parse(text) };
    requests.push(recorded);
    const answer = reply(recorded);
    if ('status' in answer) {
      response.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.text);
      return;
    }
    const logprobs = answer.logprobs ? { content: answer.logprobs.map((logprob, i) => ({ token: `t${i}`, logprob })) } : null;
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: recorded.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer.content }, logprobs, finish_reason: 'stop' }],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
