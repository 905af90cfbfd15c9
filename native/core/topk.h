// Bounded top-k collector: a binary heap of at most k hits whose root is the
// worst kept hit, so a candidate is compared against one value and most
// candidates of a large scan are rejected without touching the heap.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include "types.h"

namespace chronoql {

class TopKCollector {
 public:
  void reset(uint32_t k) {
    k_ = k;
    heap_.clear();
    heap_.reserve(k);
  }

  bool full() const { return heap_.size() == k_; }
  size_t size() const { return heap_.size(); }

  // Score a candidate must reach (>=) to be worth offering; ties are decided
  // by id inside offer(). -inf while the collector is not full.
  float threshold() const {
    return full() ? heap_.front().score : -std::numeric_limits<float>::infinity();
  }

  // Returns true when the hit was kept.
  bool offer(float score, RowId id) {
    if (k_ == 0) return false;
    if (!full()) {
      heap_.push_back(Hit{score, id});
      siftUp(heap_.size() - 1);
      return true;
    }
    const Hit& worst = heap_.front();
    if (!ranksBefore(score, id, worst.score, worst.id)) return false;
    heap_.front() = Hit{score, id};
    siftDown(0);
    return true;
  }

  const std::vector<Hit>& hits() const { return heap_; }

 private:
  // "a is worse than b": the heap keeps the worst hit at the root.
  static bool worse(const Hit& a, const Hit& b) { return ranksBefore(b.score, b.id, a.score, a.id); }

  void siftUp(size_t i) {
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!worse(heap_[i], heap_[parent])) break;
      std::swap(heap_[i], heap_[parent]);
      i = parent;
    }
  }

  void siftDown(size_t i) {
    const size_t n = heap_.size();
    for (;;) {
      const size_t left = 2 * i + 1;
      if (left >= n) break;
      size_t pick = left;
      if (left + 1 < n && worse(heap_[left + 1], heap_[left])) pick = left + 1;
      if (!worse(heap_[pick], heap_[i])) break;
      std::swap(heap_[i], heap_[pick]);
      i = pick;
    }
  }

  uint32_t k_ = 0;
  std::vector<Hit> heap_;
};

// Sorts hits best first under the shared ranking rule and keeps at most k.
inline void sortAndTruncate(std::vector<Hit>& hits, size_t k) {
  const auto byRank = [](const Hit& a, const Hit& b) { return ranksBefore(a.score, a.id, b.score, b.id); };
  if (hits.size() > k) {
    std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(), byRank);
    hits.resize(k);
  } else {
    std::sort(hits.begin(), hits.end(), byRank);
  }
}

}  // namespace chronoql
