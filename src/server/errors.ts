import { unwrapResolverError } from '@apollo/server/errors';
import type { GraphQLFormattedError } from 'graphql';
import { IngestBusyError, IngestLeaseLostError, InvalidSnapshotError, SnapshotOrderError } from '../ingest/errors.js';

/** Gives domain errors a stable `extensions.code` (and the input problems, for bad snapshots). */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (original instanceof InvalidSnapshotError) {
    return { ...formatted, extensions: { ...formatted.extensions, code: original.code, problems: original.problems } };
  }
  if (original instanceof SnapshotOrderError || original instanceof IngestBusyError || original instanceof IngestLeaseLostError) {
    return { ...formatted, extensions: { ...formatted.extensions, code: original.code } };
  }
  if (original instanceof RangeError) {
    return { ...formatted, extensions: { ...formatted.extensions, code: 'BAD_USER_INPUT' } };
  }
  return formatted;
}
