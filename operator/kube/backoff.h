#pragma once

// Capped exponential backoff with jitter: base * 2^attempt, at most `cap`, each delay drawn
// uniformly from [delay/2, delay] so that many failing callers do not retry in lockstep.
// Not thread-safe; one instance per retry loop.

#include <chrono>
#include <cstdint>
#include <random>

namespace spool::op::kube {

class backoff {
public:
    using duration = std::chrono::milliseconds;

    backoff(duration base, duration cap, uint64_t seed = std::random_device{}())
        : _base(base), _cap(cap), _rng(seed) {}

    // The delay before the next attempt; grows until the cap.
    duration next();
    void reset() { _attempt = 0; }
    int attempts() const { return _attempt; }

    // The un-jittered delay for a given attempt, for callers that only need the curve.
    static duration ceiling(duration base, duration cap, int attempt);

private:
    duration _base;
    duration _cap;
    int _attempt = 0;
    std::mt19937_64 _rng;
};

}  // namespace spool::op::kube
