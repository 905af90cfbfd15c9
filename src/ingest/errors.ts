/** One problem in the input, located precisely enough for a user to fix it. */
export interface InputProblem {
  /** A file name, or "articles" for a GraphQL payload. */
  source: string;
  /** 1-based line (file) or position (payload). */
  line: number;
  message: string;
}

/** Input that cannot be ingested. Nothing has been written when this is thrown. */
export class InvalidSnapshotError extends Error {
  readonly code = 'INVALID_SNAPSHOT';

  constructor(readonly problems: InputProblem[]) {
    const shown = problems.slice(0, 10).map((p) => `  ${p.source}:${p.line}: ${p.message}`);
    const more = problems.length > shown.length ? [`  ... and ${problems.length - shown.length} more`] : [];
    super([`snapshot rejected, nothing written (${problems.length} problem(s)):`, ...shown, ...more].join('\n'));
    this.name = 'InvalidSnapshotError';
  }
}

/** A snapshot that would rewrite history: older than, or conflicting with, what is stored. */
export class SnapshotOrderError extends Error {
  readonly code = 'SNAPSHOT_OUT_OF_ORDER';

  constructor(message: string) {
    super(message);
    this.name = 'SnapshotOrderError';
  }
}
