/**
 * GrowOVER's generators on an OpenAI-compatible chat model (Ko et al., 2024, section 3.1 and
 * Appendix C): a question answerable without its context whose short answer is a span of the
 * evidence (GrowOVER-QA), and a 3–4 turn user/expert dialogue whose every reply rests on one
 * sentence (GrowOVER-DIALOGUE). A model's reply is checked, not trusted: an item that breaks a
 * rule is left out, so a bad reply yields fewer items, never an exception. A failing endpoint
 * throws ChatRequestError, which names the URL.
 */
import { ChatClient, type ChatEndpointConfig, type ChatMessage } from '../platform/openaiChat.js';
import { MAX_ANSWER_TOKENS } from '../text/annotation.js';
import { holdsWords, normalizeAnswer, spacedWords } from '../text/normalize.js';
import type { DialogueGenerator, DraftDialogue, DraftDialogueTurn, DraftQuestion, GenerationInput, QuestionGenerator } from './types.js';

const QUESTION_REPLY_TOKENS = 512;
const DIALOGUE_REPLY_TOKENS = 1536;
const MIN_DIALOGUE_TURNS = 3;
const MAX_DIALOGUE_TURNS = 4;

const QUESTION_SYSTEM_PROMPT = 'You write closed-book quiz questions from encyclopedia sentences. Reply with JSON only.';

const DIALOGUE_SYSTEM_PROMPT =
  'You write short, natural conversations between a curious user and an expert, grounded in encyclopedia sentences. Reply with JSON only.';

/** Sentences are shown numbered from 1, the way people (and models) count; evidence indices are 0-based. */
function numberedSentences(input: GenerationInput, withPreviousVersions: boolean): string {
  return input.sentences
    .map((sentence, i) => {
      const current = `[${i + 1}] ${sentence.text}`;
      return withPreviousVersions && sentence.previousText ? `${current}\n    (previous version: ${sentence.previousText})` : current;
    })
    .join('\n');
}

/** A CHANGED item tests that the old answer is no longer given, so it is asked for whenever the old text is known. */
function asksPreviousAnswer(input: GenerationInput): boolean {
  return input.type === 'CHANGED' && input.sentences.some((sentence) => sentence.previousText);
}

function questionMessages(input: GenerationInput): ChatMessage[] {
  const changed = asksPreviousAnswer(input);
  const rules = [
    `Write one question about "${input.title}" from the numbered sentences below.`,
    `- Someone who cannot see the sentences must be able to answer it: name its subject ("${input.title}" or the entity the sentence is about) instead of saying "it", "he" or "the article".`,
    `- Its answer is a short entity (a name, place, date, number or short phrase of at most ${MAX_ANSWER_TOKENS} words) copied exactly from the sentences.`,
    '- The answer must not appear in the question.',
    '- List the numbers of the sentences the answer rests on.',
  ];
  const changedRules = [
    '- Some sentences were rewritten; their previous version is shown below them.',
    '- Ask about something whose answer changed: the current sentence gives one answer and its previous version another. The question must make sense for both versions.',
    '- Give the previous answer too, copied exactly from the previous version.',
  ];
  const shape = changed
    ? '{"questions": [{"question": "...", "answer": "...", "previous_answer": "...", "evidence": [1]}]}'
    : '{"questions": [{"question": "...", "answer": "...", "evidence": [1]}]}';
  const user = [
    ...rules,
    ...(changed ? changedRules : []),
    '',
    `Title: ${input.title}`,
    'Sentences:',
    numberedSentences(input, changed),
    '',
    `Reply with JSON of this shape: ${shape}`,
  ].join('\n');
  return [
    { role: 'system', content: QUESTION_SYSTEM_PROMPT },
    { role: 'user', content: user },
  ];
}

function dialogueMessages(input: GenerationInput): ChatMessage[] {
  const user = [
    `Write a conversation of ${MIN_DIALOGUE_TURNS} or ${MAX_DIALOGUE_TURNS} turns about "${input.title}" from the numbered sentences below.`,
    '- In each turn the user says something or asks a question, and the expert replies.',
    '- Each expert reply rests on exactly one sentence; give its number.',
    '- The user opens by naming the subject, so the conversation makes sense without the sentences.',
    '',
    `Title: ${input.title}`,
    'Sentences:',
    numberedSentences(input, false),
    '',
    'Reply with JSON of this shape: {"dialogues": [{"turns": [{"user": "...", "expert": "...", "evidence": 1}]}]}',
  ].join('\n');
  return [
    { role: 'system', content: DIALOGUE_SYSTEM_PROMPT },
    { role: 'user', content: user },
  ];
}

/**
 * The index of the bracket that closes the one at `start`, or -1. Brackets inside strings do not
 * count, so a "}" in an answer does not cut the value short.
 */
function closingBracket(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The JSON in a model's reply: the reply itself, the body of a ``` fence, or the first object
 * (or list of objects) in prose ("Here is the question: {...} I hope this helps"). In prose a
 * bare list such as "[2]" is a sentence number the model is talking about, not its answer.
 */
export function replyJson(content: string): unknown {
  const fenced = [...content.matchAll(/```[a-zA-Z]*\s*\n?([\s\S]*?)```/g)].map((match) => match[1]!);
  for (const candidate of [content, ...fenced]) {
    const value = parseOrUndefined(candidate.trim());
    if (value !== undefined) return value;
  }
  for (let start = 0; start < content.length; start++) {
    if (content[start] !== '{' && content[start] !== '[') continue;
    const end = closingBracket(content, start);
    const value = end > start ? parseOrUndefined(content.slice(start, end + 1)) : undefined;
    if (isRecord(value) || (Array.isArray(value) && value.some(isRecord))) return value;
  }
  return undefined;
}

/** The items of a reply: under `key` (`{"questions": [...]}`), a bare list, or one bare item. */
function replyItems(value: unknown, key: string, itemField: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (!isRecord(value)) return [];
  if (Array.isArray(value[key])) return value[key] as unknown[];
  return itemField in value ? [value] : [];
}

function nonEmptyText(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** A 1-based sentence number from the reply as a 0-based index, or null when it names no sentence. */
function sentenceIndex(value: unknown, sentenceCount: number): number | null {
  const number = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= 1 && number <= sentenceCount ? number - 1 : null;
}

/** Every cited sentence as an index, or null when the list is empty or any number is out of range. */
function evidenceIndices(value: unknown, sentenceCount: number): number[] | null {
  const cited = Array.isArray(value) ? value : [value];
  const indices = cited.map((item) => sentenceIndex(item, sentenceCount));
  if (indices.length === 0 || indices.some((index) => index === null)) return null;
  return [...new Set(indices as number[])].sort((a, b) => a - b);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The phrase as the text spells it, when the text contains it (ignoring case), else null. */
function spanIn(text: string, phrase: string): string | null {
  return new RegExp(escapeRegExp(phrase), 'iu').exec(text)?.[0] ?? null;
}

/** Whether the answer's words occur in the question in a row: such a question gives its answer away. */
function answerInQuestion(answer: string, question: string): boolean {
  return holdsWords(spacedWords(question), normalizeAnswer(answer));
}

function draftQuestion(raw: unknown, input: GenerationInput): DraftQuestion | null {
  if (!isRecord(raw)) return null;
  const question = nonEmptyText(raw.question);
  const answer = nonEmptyText(raw.answer);
  const evidence = evidenceIndices(raw.evidence, input.sentences.length);
  if (question === null || answer === null || evidence === null) return null;
  if (answer.split(/\s+/).length > MAX_ANSWER_TOKENS || answerInQuestion(answer, question)) return null;
  const span = evidence.map((index) => spanIn(input.sentences[index]!.text, answer)).find((found) => found !== null);
  if (span === undefined) return null;
  const previousAnswers: string[] = [];
  if (asksPreviousAnswer(input)) {
    const previous = nonEmptyText(raw.previous_answer ?? raw.previousAnswer);
    if (previous === null || normalizeAnswer(previous) === normalizeAnswer(span)) return null;
    const previousSpan = evidence.map((index) => spanIn(input.sentences[index]!.previousText ?? '', previous)).find((found) => found !== null);
    if (previousSpan === undefined) return null;
    previousAnswers.push(previousSpan);
  }
  return { question, answers: [span], previousAnswers, evidence, form: 'chat' };
}

function draftTurn(raw: unknown, sentenceCount: number): DraftDialogueTurn | null {
  if (!isRecord(raw)) return null;
  const user = nonEmptyText(raw.user);
  const expert = nonEmptyText(raw.expert);
  const evidence = sentenceIndex(Array.isArray(raw.evidence) && raw.evidence.length === 1 ? raw.evidence[0] : raw.evidence, sentenceCount);
  return user === null || expert === null || evidence === null ? null : { user, expert, evidence };
}

function draftDialogue(raw: unknown, sentenceCount: number): DraftDialogue | null {
  const rawTurns = Array.isArray(raw) ? raw : isRecord(raw) && Array.isArray(raw.turns) ? raw.turns : null;
  if (rawTurns === null || rawTurns.length < MIN_DIALOGUE_TURNS || rawTurns.length > MAX_DIALOGUE_TURNS) return null;
  const turns = rawTurns.map((turn) => draftTurn(turn, sentenceCount));
  return turns.includes(null) ? null : { turns: turns as DraftDialogueTurn[] };
}

/** The valid questions of a model's reply to the question prompt, in the reply's order. */
export function questionsFromReply(content: string, input: GenerationInput): DraftQuestion[] {
  return replyItems(replyJson(content), 'questions', 'question')
    .map((raw) => draftQuestion(raw, input))
    .filter((draft): draft is DraftQuestion => draft !== null);
}

/** The valid dialogues of a model's reply to the dialogue prompt; a bare list of turns is one dialogue. */
export function dialoguesFromReply(content: string, input: GenerationInput): DraftDialogue[] {
  const value = replyJson(content);
  const bareTurns = Array.isArray(value) && value.length > 0 && value.every((item) => isRecord(item) && 'user' in item);
  return (bareTurns ? [value] : replyItems(value, 'dialogues', 'turns'))
    .map((raw) => draftDialogue(raw, input.sentences.length))
    .filter((dialogue): dialogue is DraftDialogue => dialogue !== null);
}

export class ChatQuestionGenerator implements QuestionGenerator {
  readonly name = 'chat';
  private readonly client: ChatClient;

  constructor(config: ChatEndpointConfig) {
    this.client = new ChatClient(config, 'chat question generator');
  }

  async questions(input: GenerationInput): Promise<DraftQuestion[]> {
    if (input.sentences.length === 0) return [];
    const { content } = await this.client.complete(questionMessages(input), QUESTION_REPLY_TOKENS);
    return questionsFromReply(content, input);
  }
}

export class ChatDialogueGenerator implements DialogueGenerator {
  readonly name = 'chat';
  private readonly client: ChatClient;

  constructor(config: ChatEndpointConfig) {
    this.client = new ChatClient(config, 'chat dialogue generator');
  }

  async dialogues(input: GenerationInput): Promise<DraftDialogue[]> {
    if (input.sentences.length === 0) return [];
    const { content } = await this.client.complete(dialogueMessages(input), DIALOGUE_REPLY_TOKENS);
    return dialoguesFromReply(content, input);
  }
}
