#include "bench/loadgen/stats.h"

#include <algorithm>
#include <cmath>

namespace spool::bench {

double latency_samples::percentile(double q) {
    if (_samples.empty())
        return 0;
    if (!_sorted) {
        std::sort(_samples.begin(), _samples.end());
        _sorted = true;
    }
    auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(_samples.size())));
    rank = std::clamp<size_t>(rank, 1, _samples.size());
    return static_cast<double>(_samples[rank - 1]);
}

}  // namespace spool::bench
