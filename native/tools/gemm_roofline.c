/*
 * CPU roofline for the search benchmark: times a plain OpenBLAS sgemm with the
 * shapes of a batched search (Q queries x N rows x d), i.e. the score matrix
 * alone, with no selection and no filter. Built on demand by bench/search.ts
 * when libopenblas-dev is installed; never linked into the addon.
 *
 *   gemm_roofline N D Q[,Q...] REPEATS  ->  one JSON line per Q on stdout
 */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill(float* data, size_t count, uint32_t seed) {
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u;
    data[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
  }
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s N D Q[,Q...] REPEATS\n", argv[0]);
    return 2;
  }
  const size_t n = strtoull(argv[1], NULL, 10);
  const size_t d = strtoull(argv[2], NULL, 10);
  const int repeats = atoi(argv[4]);
  size_t qs[64];
  size_t qCount = 0, qMax = 0;
  for (char* p = argv[3]; *p && qCount < 64;) {
    qs[qCount] = strtoull(p, &p, 10);
    if (qs[qCount] > qMax) qMax = qs[qCount];
    ++qCount;
    if (*p == ',') ++p;
  }
  if (n == 0 || d == 0 || qCount == 0 || qMax == 0 || repeats <= 0) {
    fprintf(stderr, "N, D, Q and REPEATS must be positive\n");
    return 2;
  }
  float* rows = malloc(n * d * sizeof(float));
  float* queries = malloc(qMax * d * sizeof(float));
  float* scores = malloc(qMax * n * sizeof(float));
  if (!rows || !queries || !scores) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  fill(rows, n * d, 1u);
  fill(queries, qMax * d, 2u);
  for (size_t i = 0; i < qCount; ++i) {
    const size_t q = qs[i];
    if (q == 0) continue;
    double best = 1e30;
    /* One untimed call warms up OpenBLAS's threads and buffers. */
    for (int r = 0; r <= repeats; ++r) {
      const double start = now_seconds();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)q, (int)n, (int)d, 1.0f, queries, (int)d, rows, (int)d,
                  0.0f, scores, (int)n);
      const double elapsed = now_seconds() - start;
      if (r > 0 && elapsed < best) best = elapsed;
    }
    printf("{\"n\":%zu,\"d\":%zu,\"q\":%zu,\"seconds\":%.6f,\"gflops\":%.3f,\"qps\":%.3f,\"threads\":%d,\"config\":\"%s\"}\n",
           n, d, q, best, 2.0 * (double)n * (double)d * (double)q / best / 1e9, (double)q / best,
           openblas_get_num_threads(), openblas_get_config());
    fflush(stdout);
  }
  free(rows);
  free(queries);
  free(scores);
  return 0;
}
