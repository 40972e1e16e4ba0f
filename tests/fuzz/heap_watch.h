#pragma once

// How much one fuzz input made the broker's heap grow at its peak, through the sanitizer
// allocator's hooks (fuzzer builds only). Kafka's rule is that what a request builds stays a
// small multiple of its frame; the largest growth seen is printed at exit, and with
// SPOOL_FUZZ_HEAP_LIMIT_MB set an input that grows the heap beyond that aborts (libFuzzer then
// keeps it as a crash input).
//
// Threading: the hooks run on every thread (the shards allocate for the requests); begin/end
// from the fuzzer's thread.

#include <sanitizer/allocator_interface.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace spool::tests::fuzz::heap_watch {

inline std::atomic<int64_t> now{0};
inline std::atomic<int64_t> peak{0};

inline void on_malloc(const volatile void*, size_t size) {
    int64_t n = now.fetch_add(int64_t(size), std::memory_order_relaxed) + int64_t(size);
    int64_t p = peak.load(std::memory_order_relaxed);
    while (n > p && !peak.compare_exchange_weak(p, n, std::memory_order_relaxed)) {
    }
}

inline void on_free(const volatile void* ptr) {
    if (ptr != nullptr) {
        now.fetch_sub(int64_t(__sanitizer_get_allocated_size(ptr)), std::memory_order_relaxed);
    }
}

struct watch {
    int64_t limit_bytes = 0;  // 0: only measure
    int64_t worst_growth = 0;
    size_t worst_input = 0;
    int64_t base = 0;

    void install() {
        if (const char* mb = std::getenv("SPOOL_FUZZ_HEAP_LIMIT_MB")) {
            limit_bytes = std::atoll(mb) << 20;
        }
        __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
    }
    void begin() {
        base = now.load(std::memory_order_relaxed);
        peak.store(base, std::memory_order_relaxed);
    }
    void end(size_t input_size) {
        int64_t growth = peak.load(std::memory_order_relaxed) - base;
        if (growth > worst_growth) {
            worst_growth = growth;
            worst_input = input_size;
        }
        if (limit_bytes > 0 && growth > limit_bytes) {
            std::fprintf(stderr, "one %zu-byte input grew the heap by %lld bytes (limit %lld)\n",
                         input_size, (long long)growth, (long long)limit_bytes);
            std::abort();
        }
    }
    void print() const {
        std::fprintf(
            stderr, "broker fuzz: largest heap growth for one input: %lld bytes (%zu-byte input)\n",
            (long long)worst_growth, worst_input);
    }
};

}  // namespace spool::tests::fuzz::heap_watch
