#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>

namespace chronoql {

namespace {

size_t configuredThreadCount() {
  if (const char* env = std::getenv("CHRONOQL_THREADS")) {
    const long parsed = std::strtol(env, nullptr, 10);
    if (parsed > 0 && parsed <= 1024) return static_cast<size_t>(parsed);
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : hardware;
}

// State of one parallelFor call. Helpers hold it through a shared_ptr because
// a helper may be dequeued after the caller has already returned; such a late
// helper only finds the item counter exhausted and leaves.
struct LoopState {
  const std::function<void(size_t, size_t)>* body = nullptr;
  size_t itemCount = 0;
  size_t maxSlots = 1;
  std::atomic<size_t> nextItem{0};
  std::atomic<size_t> nextSlot{1};
  std::mutex mutex;
  std::condition_variable allDone;
  size_t finishedItems = 0;  // guarded by mutex
  std::exception_ptr firstError;  // guarded by mutex

  void run(size_t slot) {
    if (slot >= maxSlots) return;
    for (;;) {
      const size_t item = nextItem.fetch_add(1, std::memory_order_relaxed);
      if (item >= itemCount) return;
      std::exception_ptr error;
      try {
        (*body)(slot, item);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (error && !firstError) firstError = error;
      if (++finishedItems == itemCount) allDone.notify_all();
    }
  }
};

}  // namespace

ThreadPool& ThreadPool::shared() {
  // Intentionally leaked: joining threads during static destruction at process
  // exit can deadlock inside Node's shutdown sequence.
  static ThreadPool* pool = new ThreadPool(configuredThreadCount());
  return *pool;
}

ThreadPool::ThreadPool(size_t totalThreads) {
  const size_t helpers = totalThreads > 1 ? totalThreads - 1 : 0;
  workers_.reserve(helpers);
  for (size_t i = 0; i < helpers; ++i) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::workerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (stopping_ && tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void ThreadPool::parallelFor(size_t itemCount, size_t maxSlots,
                             const std::function<void(size_t slot, size_t item)>& body) {
  if (itemCount == 0) return;
  if (maxSlots == 0) maxSlots = 1;
  const size_t slots = std::min({maxSlots, itemCount, concurrency()});
  if (slots == 1) {
    for (size_t item = 0; item < itemCount; ++item) body(0, item);
    return;
  }

  auto state = std::make_shared<LoopState>();
  state->body = &body;
  state->itemCount = itemCount;
  state->maxSlots = slots;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 1; i < slots; ++i) {
      tasks_.emplace_back([state] { state->run(state->nextSlot.fetch_add(1, std::memory_order_relaxed)); });
    }
  }
  wake_.notify_all();
  state->run(0);

  std::unique_lock<std::mutex> lock(state->mutex);
  state->allDone.wait(lock, [&] { return state->finishedItems == itemCount; });
  if (state->firstError) std::rethrow_exception(state->firstError);
}

}  // namespace chronoql
