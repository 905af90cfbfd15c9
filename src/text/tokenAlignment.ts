/** Token sequences lined up against each other: which tokens an edit kept, and so which it changed. */

/** Beyond this many cells the quadratic alignment is skipped and only the common head and tail are kept. */
const MAX_DIFF_CELLS = 250_000;

/** For each token of `after`, the index of the same token in `before` on a longest common subsequence, or -1 where the text changed. */
export function alignTokens(before: readonly string[], after: readonly string[]): number[] {
  const mapping = new Array<number>(after.length).fill(-1);
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) mapping[head] = head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) {
    mapping[after.length - 1 - tail] = before.length - 1 - tail;
    tail++;
  }
  const rows = after.length - head - tail;
  const columns = before.length - head - tail;
  if (rows * columns > MAX_DIFF_CELLS) return mapping;
  const width = columns + 1;
  const common = new Uint32Array((rows + 1) * width);
  for (let i = rows - 1; i >= 0; i--) {
    for (let j = columns - 1; j >= 0; j--) {
      common[i * width + j] =
        after[head + i] === before[head + j] ? common[(i + 1) * width + j + 1]! + 1 : Math.max(common[(i + 1) * width + j]!, common[i * width + j + 1]!);
    }
  }
  for (let i = 0, j = 0; i < rows && j < columns;) {
    if (after[head + i] === before[head + j]) mapping[head + i++] = head + j++;
    else if (common[(i + 1) * width + j]! >= common[i * width + j + 1]!) i++;
    else j++;
  }
  return mapping;
}
