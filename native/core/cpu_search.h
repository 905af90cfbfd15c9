// Exact top-k search on the CPU: rows are scanned tile by tile on all cores,
// the time filter and the deleted flag prune rows before any arithmetic, and
// the per-query top-k selection is fused into the scan, so no score matrix and
// no filtered copy of the data is ever materialised.
#pragma once

#include "search_backend.h"

namespace chronoql {

class CpuSearchBackend final : public SearchBackend {
 public:
  std::string name() const override { return "cpu"; }
  void search(const FlatVectorStore& store, const SearchRequest& request, SearchResults& results) override;
};

// Reads every byte of the stored rows once on all cores and returns the
// seconds it took: the memory-bandwidth bound of a single-query search.
double measureHostStreamSeconds(const FlatVectorStore& store);

}  // namespace chronoql
