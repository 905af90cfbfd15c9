import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { InputProblem } from './errors.js';

export interface ParsedLine {
  value: unknown;
  /** 1-based line number in the file. */
  line: number;
}

/** Parses every non-blank line of a JSON Lines file (gzip-compressed when its name ends in .gz); lines that are not JSON become problems. */
export async function readJsonLines(path: string): Promise<{ source: string; parsed: ParsedLine[]; problems: InputProblem[] }> {
  const source = basename(path);
  const parsed: ParsedLine[] = [];
  const problems: InputProblem[] = [];
  const file = createReadStream(path);
  const input = path.endsWith('.gz') ? file.pipe(createGunzip()) : file;
  // pipe() does not pass a read error on; the line reader must see it to report the file.
  if (input !== file) file.on('error', (error) => input.destroy(error));
  const lines = createInterface({ input: input.setEncoding('utf8'), crlfDelay: Infinity });
  let lineNumber = 0;
  try {
    for await (const line of lines) {
      lineNumber += 1;
      if (line.trim() === '') continue;
      try {
        parsed.push({ value: JSON.parse(line), line: lineNumber });
      } catch (error) {
        problems.push({ source, line: lineNumber, message: `invalid JSON: ${(error as Error).message}` });
      }
    }
  } catch (error) {
    problems.push({ source, line: 0, message: `cannot read file: ${(error as Error).message}` });
  }
  return { source, parsed, problems };
}
