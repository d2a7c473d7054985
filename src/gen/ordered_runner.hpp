#pragma once
// Produce items on a pool of threads, consume them on the calling thread in index order. Used by
// the generator so that shards are written in key order while encoding runs in parallel; at most
// `window` items are produced ahead of the consumer, which bounds memory.
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace mmprof::gen {

// produce(worker, index) -> T runs on worker threads; consume(index, T&&) on this thread. The
// first exception (from either side) stops the pool and is rethrown here after every thread is
// joined.
template <class T, class Produce, class Consume>
void run_ordered(int count, int threads, int window, Produce produce, Consume consume) {
  using namespace std::chrono_literals;
  std::mutex mu;
  std::condition_variable cv;
  std::map<int, T> ready;
  int claimed = 0, consumed = 0;
  bool stop = false;
  std::exception_ptr error;

  auto fail = [&](std::exception_ptr e) {
    std::lock_guard lock(mu);
    if (!error) error = e;
    stop = true;
    cv.notify_all();
  };
  auto work = [&](int worker) {
    for (;;) {
      int index = 0;
      {
        std::unique_lock lock(mu);
        // Timed waits: a missed notification costs 100 ms, never a hang.
        while (!stop && claimed < count && claimed >= consumed + window)
          cv.wait_for(lock, 100ms);
        if (stop || claimed >= count) return;
        index = claimed++;
      }
      try {
        T item = produce(worker, index);
        std::lock_guard lock(mu);
        ready.emplace(index, std::move(item));
        cv.notify_all();
      } catch (...) {
        fail(std::current_exception());
        return;
      }
    }
  };

  std::vector<std::thread> pool;
  auto join_all = [&] {
    for (auto& t : pool)
      if (t.joinable()) t.join();
  };
  try {
    for (int w = 0; w < threads; ++w)
      pool.emplace_back(work, w);
    for (int i = 0; i < count; ++i) {
      T item;
      {
        std::unique_lock lock(mu);
        while (!stop && ready.find(i) == ready.end())
          cv.wait_for(lock, 100ms);
        if (stop) break;
        auto it = ready.find(i);
        item = std::move(it->second);
        ready.erase(it);
      }
      consume(i, std::move(item));
      std::lock_guard lock(mu);
      ++consumed;
      cv.notify_all();
    }
  } catch (...) {
    fail(std::current_exception());
  }
  join_all();
  if (error) std::rethrow_exception(error);
}

}  // namespace mmprof::gen
