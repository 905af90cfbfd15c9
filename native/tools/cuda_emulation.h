// Host emulation of the few CUDA device features the search kernels use, so
// native/cuda/search_kernels.cuh can run on a machine without a GPU: every
// CUDA thread is a std::thread, __syncthreads/__syncwarp are barriers, and
// __ballot_sync collects one vote per lane between two warp barriers. Slow
// (use small inputs) but faithful to the kernels' indexing, shared-memory
// layout, synchronisation and warp-uniform control flow. Not used by the addon.
#pragma once

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "../core/half.h"

namespace emu {

class Barrier {
 public:
  explicit Barrier(int parties) : parties_(parties) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++waiting_ == parties_) {
      waiting_ = 0;
      ++generation_;
      released_.notify_all();
      return;
    }
    released_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  int parties_;
  int waiting_ = 0;
  uint64_t generation_ = 0;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct Block {
  explicit Block(unsigned threads, size_t sharedBytes)
      : all(static_cast<int>(threads)), votes(threads / 32), shared(sharedBytes + 16) {
    for (unsigned w = 0; w < threads / 32; ++w) warps.push_back(std::make_unique<Barrier>(32));
    for (auto& v : votes) v.store(0);
  }
  Barrier all;
  std::vector<std::unique_ptr<Barrier>> warps;
  std::vector<std::atomic<uint32_t>> votes;
  std::vector<unsigned char> shared;
};

}  // namespace emu

inline thread_local emu::Dim3 threadIdx;
inline thread_local emu::Dim3 blockIdx;
inline thread_local emu::Block* emuBlock = nullptr;
inline emu::Dim3 gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(threads)
#define CHRONOQL_DYNAMIC_SHARED(type, name) type* name = reinterpret_cast<type*>(emuBlock->shared.data())

inline void __syncthreads() { emuBlock->all.wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emuBlock->warps[threadIdx.x / 32]->wait(); }
inline unsigned __ballot_sync(unsigned, bool predicate) {
  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  emuBlock->warps[warp]->wait();  // the previous ballot has been read and reset
  if (predicate) emuBlock->votes[warp].fetch_or(1u << lane);
  emuBlock->warps[warp]->wait();
  const unsigned result = emuBlock->votes[warp].load();
  emuBlock->warps[warp]->wait();
  if (lane == 0) emuBlock->votes[warp].store(0);
  return result;
}
inline int __ffs(unsigned value) { return __builtin_ffs(static_cast<int>(value)); }
template <typename T>
inline T min(T a, T b) {
  return b < a ? b : a;
}

struct __half {
  uint16_t bits;
};
inline float __half2float(__half value) { return chronoql::halfBitsToFloat(value.bits); }

namespace emu {

// Runs kernel(args...) over the grid, one std::thread per CUDA thread, one
// block at a time.
template <typename... Params, typename... Args>
void launch(Dim3 grid, unsigned threads, size_t sharedBytes, void (*kernel)(Params...), Args... args) {
  gridDim = grid;
  for (unsigned by = 0; by < grid.y; ++by) {
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      Block block(threads, sharedBytes);
      std::memset(block.shared.data(), 0xA5, block.shared.size());  // garbage, as on a GPU
      std::vector<std::thread> lanes;
      lanes.reserve(threads);
      for (unsigned t = 0; t < threads; ++t) {
        lanes.emplace_back([&, t] {
          threadIdx = Dim3{t, 1, 1};
          blockIdx = Dim3{bx, by, 1};
          emuBlock = &block;
          kernel(args...);
        });
      }
      for (auto& lane : lanes) lane.join();
    }
  }
}

}  // namespace emu
