// Public face of the CUDA path, callable from plain C++ (no CUDA headers), so
// the CPU-only build links cuda_backend_stub.cpp instead of the .cu file and
// the rest of the addon is identical in both builds.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "../core/search_backend.h"

namespace chronoql {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  size_t totalMemoryBytes = 0;
  size_t freeMemoryBytes = 0;
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
};

// Largest k the fused GPU kernel keeps per query (its per-query lists live in
// shared memory); larger k is served by the CPU backend.
constexpr uint32_t kCudaMaxK = 256;

// True in the cmake-js build compiled with nvcc.
bool cudaCompiledIn();
// Devices the runtime can use. Any runtime error (no driver, no device,
// insufficient driver) counts as "no devices": the addon must load and fall
// back to the CPU on such machines.
std::vector<CudaDeviceInfo> cudaDevices();
// Human-readable reason why cudaDevices() is empty (for error messages).
std::string cudaUnavailableReason();

struct CudaMemory {
  size_t freeBytes = 0;
  size_t totalBytes = 0;
};
// Free and total memory of device `deviceIndex` (of cudaDevices()) right now;
// zeros when it does not exist.
CudaMemory cudaDeviceMemory(int deviceIndex);
// Throws std::runtime_error when CUDA is not compiled in or no device exists.
std::unique_ptr<SearchBackend> createCudaSearchBackend(int deviceIndex);

}  // namespace chronoql
