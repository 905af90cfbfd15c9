import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import type { InputProblem } from './errors.js';

export interface ParsedLine {
  value: unknown;
  /** 1-based line number in the file. */
  line: number;
}

/** Parses every non-blank line of a JSON Lines file; lines that are not JSON become problems. */
export async function readJsonLines(path: string): Promise<{ source: string; parsed: ParsedLine[]; problems: InputProblem[] }> {
  const source = basename(path);
  const parsed: ParsedLine[] = [];
  const problems: InputProblem[] = [];
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
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
