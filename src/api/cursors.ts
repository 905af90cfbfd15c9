import { quoteInput } from '../domain/errors.js';
import { badUserInput } from './errors.js';

/** Opaque Relay cursors: base64url of "kind:value", so clients cannot mix one list's cursor into another. */
export function encodeCursor(kind: string, value: string | number): string {
  return Buffer.from(`${kind}:${value}`, 'utf8').toString('base64url');
}

export function decodeCursor(kind: string, cursor: string, argument = 'after'): string {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!decoded.startsWith(`${kind}:`)) throw badUserInput(`${quoteInput(cursor)} is not a cursor of this list`, argument);
  return decoded.slice(kind.length + 1);
}

export function decodeSeqCursor(cursor: string, argument = 'after'): number {
  const seq = Number(decodeCursor('change', cursor, argument));
  if (!Number.isInteger(seq) || seq < 0) throw badUserInput(`${quoteInput(cursor)} is not a cursor of this list`, argument);
  return seq;
}

export function checkPageSize(first: number, max = 500): number {
  if (!Number.isInteger(first) || first < 0 || first > max) {
    throw badUserInput(`first must be between 0 and ${max}, got ${first}`, 'first');
  }
  return first;
}
