// A small process-wide worker pool for data-parallel loops. The calling thread
// always takes part, so several concurrent callers (e.g. searches issued from
// different libuv workers) each make progress even when every pool worker is
// busy with someone else's loop; nothing ever waits for a free worker.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace chronoql {

class ThreadPool {
 public:
  // Shared pool sized to the machine (CHRONOQL_THREADS overrides the total
  // number of threads that take part in a loop, caller included).
  static ThreadPool& shared();

  explicit ThreadPool(size_t totalThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that can take part in one loop, caller included.
  size_t concurrency() const { return workers_.size() + 1; }

  // Calls body(slot, item) for every item in [0, itemCount). Each participating
  // thread gets a distinct slot in [0, maxSlots) so it can own per-slot scratch
  // state without locks. Items are claimed dynamically. The first exception
  // thrown by body is rethrown here after all started items have finished.
  void parallelFor(size_t itemCount, size_t maxSlots, const std::function<void(size_t slot, size_t item)>& body);

 private:
  void workerLoop();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
};

}  // namespace chronoql
