#include "fusion.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace chronoql {

void fuseArrScores(const float* first, const float* second, const float* weights, uint32_t queries, uint32_t perQuery,
                   float* out) {
  for (uint32_t q = 0; q < queries; ++q) {
    const float w = weights[q];
    if (!(w >= 0.0f && w <= 1.0f)) throw std::invalid_argument("omega: entry " + std::to_string(q) + " must be in [0, 1]");
    const size_t base = static_cast<size_t>(q) * perQuery;
    for (uint32_t j = 0; j < perQuery; ++j) {
      const double fused = (1.0 - static_cast<double>(w)) * first[base + j] + static_cast<double>(w) * second[base + j];
      out[base + j] = static_cast<float>(fused);
    }
  }
}

namespace {

// Accumulates fused scores per id in first-seen order, then sorts.
class FusionTable {
 public:
  double& at(uint32_t id) {
    const auto found = position_.find(id);
    if (found != position_.end()) return scores_[found->second];
    position_.emplace(id, ids_.size());
    ids_.push_back(id);
    scores_.push_back(0.0);
    return scores_.back();
  }

  FusedRanking ranked() const {
    std::vector<size_t> order(ids_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return scores_[a] > scores_[b] || (scores_[a] == scores_[b] && ids_[a] < ids_[b]);
    });
    FusedRanking out;
    out.ids.reserve(order.size());
    out.scores.reserve(order.size());
    for (size_t i : order) {
      out.ids.push_back(ids_[i]);
      out.scores.push_back(scores_[i]);
    }
    return out;
  }

 private:
  std::unordered_map<uint32_t, size_t> position_;
  std::vector<uint32_t> ids_;
  std::vector<double> scores_;
};

void checkNoDuplicates(const uint32_t* ids, uint32_t begin, uint32_t end, uint32_t list) {
  std::vector<uint32_t> sorted(ids + begin, ids + end);
  std::sort(sorted.begin(), sorted.end());
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) {
    throw std::invalid_argument("lists[" + std::to_string(list) + "]: id " + std::to_string(*dup) + " appears twice");
  }
}

}  // namespace

FusedRanking weightedSumFusion(const uint32_t* offsets, uint32_t listCount, const uint32_t* ids, const double* scores,
                               const double* weights) {
  FusionTable table;
  for (uint32_t l = 0; l < listCount; ++l) {
    const uint32_t begin = offsets[l];
    const uint32_t end = offsets[l + 1];
    if (!std::isfinite(weights[l])) throw std::invalid_argument("weights: entry " + std::to_string(l) + " must be finite");
    checkNoDuplicates(ids, begin, end, l);
    if (begin == end) continue;
    double lo = scores[begin];
    double hi = scores[begin];
    for (uint32_t i = begin; i < end; ++i) {
      if (!std::isfinite(scores[i])) throw std::invalid_argument("lists[" + std::to_string(l) + "]: scores must be finite");
      lo = std::min(lo, scores[i]);
      hi = std::max(hi, scores[i]);
    }
    const double range = hi - lo;
    for (uint32_t i = begin; i < end; ++i) {
      const double normalised = range > 0.0 ? (scores[i] - lo) / range : 1.0;
      table.at(ids[i]) += weights[l] * normalised;
    }
  }
  return table.ranked();
}

FusedRanking reciprocalRankFusion(const uint32_t* offsets, uint32_t listCount, const uint32_t* ids, double k,
                                  const double* weights) {
  if (!(k >= 0.0) || !std::isfinite(k)) throw std::invalid_argument("k: must be a finite number >= 0");
  FusionTable table;
  for (uint32_t l = 0; l < listCount; ++l) {
    const uint32_t begin = offsets[l];
    const uint32_t end = offsets[l + 1];
    const double weight = weights != nullptr ? weights[l] : 1.0;
    if (!std::isfinite(weight)) throw std::invalid_argument("weights: entry " + std::to_string(l) + " must be finite");
    checkNoDuplicates(ids, begin, end, l);
    for (uint32_t i = begin; i < end; ++i) {
      const double rank = static_cast<double>(i - begin + 1);
      table.at(ids[i]) += weight / (k + rank);
    }
  }
  return table.ranked();
}

}  // namespace chronoql
