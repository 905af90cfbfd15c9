import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createGunzip } from 'node:zlib';
import type { InputProblem } from './errors.js';

export interface ParsedLine {
  value: unknown;
  /** 1-based line number in the file. */
  line: number;
}

const NEWLINE = 0x0a;

/**
 * The platform's UTF-8 decoder, refusing what is not UTF-8 instead of putting U+FFFD in its
 * place. A byte-order mark is kept, so it stays an error where it was one.
 */
const utf8Decoder = (): TextDecoder => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parses every non-blank line of a JSON Lines file (gzip-compressed when its name ends in .gz);
 * a line that is not UTF-8 or not JSON becomes a problem. Lines are split on their bytes (a
 * newline byte is never part of a longer UTF-8 character) and each is decoded alone, so a bad
 * byte is reported with its line and offset and the reading goes on.
 */
export async function readJsonLines(path: string): Promise<{ source: string; parsed: ParsedLine[]; problems: InputProblem[] }> {
  const source = basename(path);
  const where = path.endsWith('.gz') ? 'of the decompressed file' : 'of the file';
  const parsed: ParsedLine[] = [];
  const problems: InputProblem[] = [];
  const decoder = utf8Decoder();
  let lineNumber = 0;
  let lineOffset = 0;
  const readLine = (bytes: Uint8Array): void => {
    lineNumber += 1;
    const offset = lineOffset;
    lineOffset += bytes.length + 1;
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      problems.push({ source, line: lineNumber, message: notUtf8(bytes, offset, where) });
      return;
    }
    if (text.trim() === '') return;
    try {
      parsed.push({ value: JSON.parse(text), line: lineNumber });
    } catch (error) {
      problems.push({ source, line: lineNumber, message: `invalid JSON: ${(error as Error).message}` });
    }
  };

  const file = createReadStream(path);
  const input = path.endsWith('.gz') ? file.pipe(createGunzip()) : file;
  // pipe() does not pass a read error on; the loop below must see it to report the file.
  if (input !== file) file.on('error', (error) => input.destroy(error));
  // The start of a line that runs on into the next chunks, joined once its end comes.
  let pieces: Buffer[] = [];
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      let start = 0;
      for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
        const tail = chunk.subarray(start, end);
        readLine(pieces.length === 0 ? tail : Buffer.concat([...pieces, tail]));
        pieces = [];
        start = end + 1;
      }
      if (start < chunk.length) pieces.push(chunk.subarray(start));
    }
    if (pieces.length > 0) readLine(Buffer.concat(pieces));
  } catch (error) {
    problems.push({ source, line: 0, message: `cannot read file: ${(error as Error).message}` });
  }
  return { source, parsed, problems };
}

/**
 * Where a line stops being UTF-8, found with the platform's decoder: the longest start of the
 * line it decodes (an unfinished character at its end is held back, not refused) ends where the
 * bad bytes begin.
 */
function notUtf8(bytes: Uint8Array, lineOffset: number, where: string): string {
  const decodes = (length: number): boolean => {
    try {
      utf8Decoder().decode(bytes.subarray(0, length), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  let good = 0;
  let bad = bytes.length + 1;
  while (bad - good > 1) {
    const middle = (good + bad) >>> 1;
    if (decodes(middle)) good = middle;
    else bad = middle;
  }
  // Bytes of a character left unfinished are held back: the bad sequence starts with them.
  const start = Buffer.byteLength(utf8Decoder().decode(bytes.subarray(0, good), { stream: true }));
  const badBytes = bytes.subarray(start, Math.max(good, start + 1));
  const shown = [...badBytes.subarray(0, 4)].map((byte) => byte.toString(16).padStart(2, '0')).join(' ');
  return `invalid UTF-8 at byte offset ${lineOffset + start} ${where} (byte ${start + 1} of the line: ${shown}); the file must be UTF-8 text`;
}
