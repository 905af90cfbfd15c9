// Host emulation of the CUDA device features the search kernels use, so
// native/cuda/search_kernels.cuh can run on a machine without a GPU: every
// CUDA thread is a std::thread, __syncthreads/__syncwarp are barriers, warp
// collectives (ballot, shuffles, reductions) exchange one value per lane
// through the warp, and nvcuda::wmma works on 16x16x16 tiles with the
// documented semantics. Slow (use small inputs) but faithful to the kernels'
// indexing, shared-memory layout, synchronisation and warp-uniform control
// flow. Not used by the addon.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "../core/half.h"

namespace emu {

// A reusable barrier whose waiters sleep on a futex (C++20 atomic wait):
// with hundreds of lane threads on a few cores, a mutex and condition
// variable spend most of the time handing the mutex around.
class Barrier {
 public:
  explicit Barrier(int parties) : parties_(parties) {}
  void wait() {
    const uint32_t generation = generation_.load(std::memory_order_acquire);
    if (waiting_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
      waiting_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      generation_.notify_all();
      return;
    }
    while (generation_.load(std::memory_order_acquire) == generation) generation_.wait(generation, std::memory_order_acquire);
  }

 private:
  const int parties_;
  std::atomic<int> waiting_{0};
  std::atomic<uint32_t> generation_{0};
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// Dynamic shared memory aligned as on a GPU (wmma needs 256-bit aligned tiles).
constexpr size_t kSharedAlignment = 128;

struct AlignedBytes {
  void operator()(unsigned char* p) const { std::free(p); }
};

struct Block {
  Block(unsigned threads, size_t sharedBytes)
      : all(static_cast<int>(threads)),
        exchange(threads / 32),
        sharedSize(sharedBytes),
        shared(static_cast<unsigned char*>(
            std::aligned_alloc(kSharedAlignment, (sharedBytes + 16 + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment))) {
    for (unsigned w = 0; w < threads / 32; ++w) warps.push_back(std::make_unique<Barrier>(32));
    std::memset(shared.get(), 0xA5, sharedBytes + 16);  // garbage, as on a GPU
  }
  Barrier all;
  std::vector<std::unique_ptr<Barrier>> warps;
  // Per warp, two slots of one value per lane. A collective writes its lane's
  // value into the slot of its parity, waits once, and reads the others: a
  // lane can only write that slot again two collectives later, after every
  // lane has passed the barrier in between (and so finished reading).
  std::vector<std::array<std::array<uint64_t, 32>, 2>> exchange;
  size_t sharedSize;
  std::unique_ptr<unsigned char, AlignedBytes> shared;
};

}  // namespace emu

inline thread_local emu::Dim3 threadIdx;
inline thread_local emu::Dim3 blockIdx;
inline thread_local emu::Block* emuBlock = nullptr;
inline thread_local unsigned emuCollectives = 0;
inline emu::Dim3 gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(threads)
#define CHRONOQL_DYNAMIC_SHARED(type, name) type* name = reinterpret_cast<type*>(emuBlock->shared.get())

namespace emu {

inline void requireFullWarp(unsigned mask, const char* what) {
  // The kernels only use whole-warp collectives; a partial mask would mean divergent lanes.
  if (mask != 0xffffffffu) {
    std::fprintf(stderr, "%s: the emulation supports full-warp masks only (got %08x)\n", what, mask);
    std::abort();
  }
}

// Every lane contributes `value`; returns all 32 contributions, indexed by lane.
inline const std::array<uint64_t, 32>& warpExchange(uint64_t value) {
  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  auto& slot = emuBlock->exchange[warp][emuCollectives++ & 1u];
  slot[lane] = value;
  emuBlock->warps[warp]->wait();
  return slot;
}

template <typename T>
uint64_t toBits(T value) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "warp exchange carries at most 64 bits");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof value);
  return bits;
}

template <typename T>
T fromBits(uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace emu

inline void __syncthreads() { emuBlock->all.wait(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  emu::requireFullWarp(mask, "__syncwarp");
  emuBlock->warps[threadIdx.x / 32]->wait();
}
inline unsigned __ballot_sync(unsigned mask, bool predicate) {
  emu::requireFullWarp(mask, "__ballot_sync");
  const auto& votes = emu::warpExchange(predicate ? 1 : 0);
  unsigned result = 0;
  for (unsigned lane = 0; lane < 32; ++lane) result |= static_cast<unsigned>(votes[lane]) << lane;
  return result;
}
inline bool __any_sync(unsigned mask, bool predicate) { return __ballot_sync(mask, predicate) != 0; }
template <typename T>
T __shfl_sync(unsigned mask, T value, int sourceLane) {
  emu::requireFullWarp(mask, "__shfl_sync");
  return emu::fromBits<T>(emu::warpExchange(emu::toBits(value))[static_cast<unsigned>(sourceLane) % 32]);
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T value, int laneMask) {
  emu::requireFullWarp(mask, "__shfl_xor_sync");
  return emu::fromBits<T>(emu::warpExchange(emu::toBits(value))[(threadIdx.x % 32) ^ static_cast<unsigned>(laneMask)]);
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned value) {
  emu::requireFullWarp(mask, "__reduce_max_sync");
  unsigned result = 0;
  for (uint64_t v : emu::warpExchange(value)) result = std::max(result, static_cast<unsigned>(v));
  return result;
}
inline int __ffs(unsigned value) { return __builtin_ffs(static_cast<int>(value)); }
inline int __ffsll(unsigned long long value) { return __builtin_ffsll(static_cast<long long>(value)); }
inline unsigned atomicAdd(unsigned* address, unsigned value) { return __atomic_fetch_add(address, value, __ATOMIC_RELAXED); }
inline unsigned atomicMax(unsigned* address, unsigned value) {
  unsigned old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (old < value && !__atomic_compare_exchange_n(address, &old, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
inline unsigned __float_as_uint(float value) { return emu::fromBits<unsigned>(emu::toBits(value)); }
template <typename T>
inline T min(T a, T b) {
  return b < a ? b : a;
}

// CUDA's vector types (16-byte aligned, as the hardware's vector loads need).
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct float2 {
  float x, y;
};

struct __half {
  uint16_t bits;
};
struct alignas(4) __half2 {
  __half x, y;
};
inline float __half2float(__half value) { return chronoql::halfBitsToFloat(value.bits); }
inline __half __float2half_rn(float value) { return __half{chronoql::floatToHalfBits(value)}; }
inline __half2 __floats2half2_rn(float low, float high) { return __half2{__float2half_rn(low), __float2half_rn(high)}; }
inline float2 __half22float2(__half2 value) { return float2{__half2float(value.x), __half2float(value.y)}; }

// nvcuda::wmma for the 16x16x16 shape with half inputs and float accumulators.
// A matrix_a/matrix_b fragment keeps the whole tile in every lane (mma needs
// all of it); an accumulator keeps 8 elements per lane, as on the hardware,
// in a scrambled order: which element a lane holds is hardware-defined, and a
// kernel that relied on this emulation's order would fail here.
namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment;

template <typename Layout>
struct fragment<matrix_a, 16, 16, 16, __half, Layout> {
  static constexpr int num_elements = 16 * 16;
  __half x[num_elements];  // (row, k) at row * 16 + k
};
template <typename Layout>
struct fragment<matrix_b, 16, 16, 16, __half, Layout> {
  static constexpr int num_elements = 16 * 16;
  __half x[num_elements];  // (k, column) at k * 16 + column
};
template <>
struct fragment<accumulator, 16, 16, 16, float, void> {
  static constexpr int num_elements = 8;
  float x[num_elements];
};

namespace detail {

// Tile position (row * 16 + column) of a lane's accumulator element.
inline unsigned accumulatorPosition(unsigned element) {
  const unsigned lane = threadIdx.x % 32;
  return ((element * 32 + lane) * 73u + 19u) & 255u;
}

inline void checkTile(const void* pointer, unsigned ldm, size_t elementBytes, const char* what) {
  if (reinterpret_cast<uintptr_t>(pointer) % 32 != 0 || (ldm * elementBytes) % 16 != 0) {
    std::fprintf(stderr, "%s: the pointer must be 256-bit aligned and ldm a multiple of 16 bytes (ldm %u)\n", what, ldm);
    std::abort();
  }
}

}  // namespace detail

template <typename Fragment, typename T>
void fill_fragment(Fragment& fragment, T value) {
  for (auto& element : fragment.x) element = value;
}

// Element (i, j) of the fragment's tile (A: row, k; B: k, column) is read at
// i * ldm + j in row-major memory, at j * ldm + i in column-major memory.
template <typename Use, typename Layout>
void load_matrix_sync(fragment<Use, 16, 16, 16, __half, Layout>& fragment, const __half* pointer, unsigned ldm) {
  detail::checkTile(pointer, ldm, sizeof(__half), "load_matrix_sync");
  constexpr bool rowMajor = std::is_same_v<Layout, row_major>;
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned j = 0; j < 16; ++j) fragment.x[i * 16 + j] = pointer[rowMajor ? i * ldm + j : j * ldm + i];
}

// D = A x B + C with products of halves (exact in float) accumulated in float.
template <typename LayoutA, typename LayoutB>
void mma_sync(fragment<accumulator, 16, 16, 16, float>& d, const fragment<matrix_a, 16, 16, 16, __half, LayoutA>& a,
              const fragment<matrix_b, 16, 16, 16, __half, LayoutB>& b, const fragment<accumulator, 16, 16, 16, float>& c) {
  for (int element = 0; element < 8; ++element) {
    const unsigned position = detail::accumulatorPosition(element);
    const unsigned row = position / 16;
    const unsigned column = position % 16;
    float sum = c.x[element];
    for (unsigned k = 0; k < 16; ++k) sum = std::fma(__half2float(a.x[row * 16 + k]), __half2float(b.x[k * 16 + column]), sum);
    d.x[element] = sum;
  }
}

// Each lane writes its own elements; other lanes see them after a barrier.
inline void store_matrix_sync(float* pointer, const fragment<accumulator, 16, 16, 16, float>& c, unsigned ldm, layout_t layout) {
  detail::checkTile(pointer, ldm, sizeof(float), "store_matrix_sync");
  for (int element = 0; element < 8; ++element) {
    const unsigned position = detail::accumulatorPosition(element);
    const unsigned row = position / 16;
    const unsigned column = position % 16;
    pointer[layout == mem_row_major ? row * ldm + column : column * ldm + row] = c.x[element];
  }
}

}  // namespace nvcuda::wmma

namespace emu {

// The lane threads, created once and reused by every block: starting 256
// threads per block would cost more than most emulated blocks run.
class LanePool {
 public:
  explicit LanePool(unsigned threads) : start_(static_cast<int>(threads) + 1), done_(static_cast<int>(threads) + 1) {
    for (unsigned t = 0; t < threads; ++t) {
      lanes_.emplace_back([this, t] {
        for (;;) {
          start_.wait();
          if (stopping_) return;
          threadIdx = Dim3{t, 1, 1};
          blockIdx = block_;
          emuBlock = current_;
          emuCollectives = 0;
          body_();
          done_.wait();
        }
      });
    }
  }
  ~LanePool() {
    stopping_ = true;
    start_.wait();
    for (auto& lane : lanes_) lane.join();
  }
  void run(Dim3 blockIndex, Block& block, const std::function<void()>& body) {
    block_ = blockIndex;
    current_ = &block;
    body_ = body;
    start_.wait();
    done_.wait();
  }

 private:
  Barrier start_, done_;
  std::vector<std::thread> lanes_;
  Dim3 block_;
  Block* current_ = nullptr;
  std::function<void()> body_;
  bool stopping_ = false;
};

// Runs kernel(args...) over the grid, one thread per CUDA thread, one block
// at a time.
constexpr unsigned kBlockThreads = 256;

inline LanePool& lanePool() {
  static LanePool pool(kBlockThreads);
  return pool;
}

template <typename... Params, typename... Args>
void launch(Dim3 grid, unsigned threads, size_t sharedBytes, void (*kernel)(Params...), Args... args) {
  if (threads != kBlockThreads) {
    std::fprintf(stderr, "the emulator runs blocks of %u threads (asked for %u)\n", kBlockThreads, threads);
    std::abort();
  }
  LanePool& pool = lanePool();
  gridDim = grid;
  const std::function<void()> body = [&] { kernel(args...); };
  for (unsigned by = 0; by < grid.y; ++by) {
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      Block block(threads, sharedBytes);
      pool.run(Dim3{bx, by, 1}, block, body);
    }
  }
}

}  // namespace emu
