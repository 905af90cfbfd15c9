/** Scales each `dimension`-long row of `matrix` to unit L2 length in place; zero rows stay zero. */
export function normalizeRows(matrix: Float32Array, dimension: number): Float32Array {
  for (let offset = 0; offset < matrix.length; offset += dimension) {
    let sum = 0;
    for (let j = 0; j < dimension; j++) sum += matrix[offset + j]! * matrix[offset + j]!;
    if (sum === 0 || !Number.isFinite(sum)) {
      if (!Number.isFinite(sum)) matrix.fill(0, offset, offset + dimension);
      continue;
    }
    const scale = 1 / Math.sqrt(sum);
    for (let j = 0; j < dimension; j++) matrix[offset + j] = matrix[offset + j]! * scale;
  }
  return matrix;
}

/** Dot product of row `i` of `a` and row `j` of `b` (both `dimension` wide). */
export function rowDot(a: Float32Array, i: number, b: Float32Array, j: number, dimension: number): number {
  let sum = 0;
  const oa = i * dimension;
  const ob = j * dimension;
  for (let k = 0; k < dimension; k++) sum += a[oa + k]! * b[ob + k]!;
  return sum;
}

/** The rows of a row-major matrix, as views (no copy). */
export function splitRows(matrix: Float32Array, dimension: number): Float32Array[] {
  return Array.from({ length: matrix.length / dimension }, (_, row) => matrix.subarray(row * dimension, (row + 1) * dimension));
}
