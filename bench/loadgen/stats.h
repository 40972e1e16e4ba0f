#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spool::bench {

// Latency samples in microseconds; percentiles by sorting once at the end (samples are few enough).
class latency_samples {
public:
    void add(int64_t micros) { _samples.push_back(micros); }
    size_t count() const { return _samples.size(); }
    // q in [0, 1]; returns 0 without samples.
    double percentile(double q);

private:
    std::vector<int64_t> _samples;
    bool _sorted = false;
};

}  // namespace spool::bench
