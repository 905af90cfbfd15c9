import { INVISIBLE_CHARACTER } from './model.js';

/**
 * Input a caller got wrong (a malformed date, a value out of range), as opposed to a RangeError
 * the runtime throws on its own (a string too long to build): only this one is the caller's to fix.
 */
export class InvalidInputError extends RangeError {}

/** The most characters of a caller's input quoted back whole; of a longer one, the first QUOTED_START. */
export const MAX_QUOTED_CHARACTERS = 64;
const QUOTED_START = 48;

/**
 * A caller's input cut to what an error message or a log line may echo of it: all of it when it
 * is short, else its start and its length. A 900 KB cursor was echoed whole, to the caller and
 * into one log line. `cut` is null when nothing was cut.
 */
function clip(input: string): { start: string; cut: string | null } {
  if (input.length <= MAX_QUOTED_CHARACTERS) return { start: input, cut: null };
  let characters = 0;
  for (let i = 0; i < input.length; i += input.codePointAt(i)! > 0xffff ? 2 : 1) characters += 1;
  if (characters <= MAX_QUOTED_CHARACTERS) return { start: input, cut: null };
  // Cut before a surrogate pair rather than through it.
  const start = input.slice(0, QUOTED_START).replace(/[\uD800-\uDBFF]$/, '');
  return { start: `${start}…`, cut: ` (${characters.toLocaleString('en-US')} characters)` };
}

const INVISIBLE_CHARACTERS = new RegExp(INVISIBLE_CHARACTER.source, 'gu');
/** A character that does not show as its escape: a direction override in a log line would turn the line around. */
const shown = (text: string): string =>
  text.replace(INVISIBLE_CHARACTERS, (character) =>
    character
      .split('')
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
  );

/**
 * Caller input as an error message quotes it: in JSON quotes (a quote or a lone surrogate shows
 * as an escape, and so does a character that does not show), cut when long:
 * `"eyJraW5kIjoi…" (900,000 characters)`.
 */
export function quoteInput(input: string): string {
  const { start, cut } = clip(input);
  return `${shown(JSON.stringify(start))}${cut ?? ''}`;
}

/** Caller input as a log field holds it (the logger adds the quotes), cut and escaped like `quoteInput`'s. */
export function clipInput(input: string): string {
  const { start, cut } = clip(input);
  return `${shown(start)}${cut ?? ''}`;
}
