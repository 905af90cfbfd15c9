// Score fusion used by adaptive re-retrieval and hybrid ranking. Lists arrive
// in CSR form (offsets into shared id/score arrays). Fused scores are computed
// in double in a fixed order, so the TypeScript reference reproduces them
// exactly and ties are decided by the id rule alone.
#pragma once

#include <cstdint>
#include <vector>

namespace chronoql {

struct FusedRanking {
  std::vector<uint32_t> ids;   // best first; equal scores by smaller id
  std::vector<double> scores;
};

// out[q*perQuery + j] = (1 - weights[q]) * first[...] + weights[q] * second[...]
// (ARR: w = lambda * p(reliable) of that query's first answer).
void fuseArrScores(const float* first, const float* second, const float* weights, uint32_t queries, uint32_t perQuery,
                   float* out);

// Per list, scores are min-max normalised to [0, 1] (a list whose scores are
// all equal maps to 1); a candidate missing from a list contributes 0. The
// fused score is sum(weight[l] * normalised). Throws on duplicate ids within a
// list or non-finite scores/weights.
FusedRanking weightedSumFusion(const uint32_t* offsets, uint32_t listCount, const uint32_t* ids, const double* scores,
                               const double* weights);

// Reciprocal rank fusion: score = sum over lists of weight[l] / (k + rank),
// rank starting at 1 in each list's given order. weights may be null (all 1).
FusedRanking reciprocalRankFusion(const uint32_t* offsets, uint32_t listCount, const uint32_t* ids, double k,
                                  const double* weights);

}  // namespace chronoql
