// CPU-only build: the CUDA entry points exist but report that the addon was
// built without CUDA, so callers need no #ifdefs.
#include "cuda_backend.h"

#include <stdexcept>

namespace chronoql {

bool cudaCompiledIn() { return false; }

std::vector<CudaDeviceInfo> cudaDevices() { return {}; }

std::string cudaUnavailableReason() {
  return "this build of chronoql_native has no CUDA support (built without nvcc)";
}

CudaMemory cudaDeviceMemory(int) { return {}; }

std::unique_ptr<SearchBackend> createCudaSearchBackend(int) { throw std::runtime_error(cudaUnavailableReason()); }

}  // namespace chronoql
