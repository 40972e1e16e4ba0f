#include "operator/kube/backoff.h"

#include <algorithm>

namespace spool::op::kube {

backoff::duration backoff::ceiling(duration base, duration cap, int attempt) {
    // Shifting past ~30 would overflow; by then the cap has long applied.
    int shift = std::min(attempt, 30);
    auto d = base.count() * (int64_t{1} << shift);
    return duration(std::min<int64_t>(d, cap.count()));
}

backoff::duration backoff::next() {
    auto top = ceiling(_base, _cap, _attempt);
    ++_attempt;
    std::uniform_int_distribution<int64_t> dist(top.count() / 2, top.count());
    return duration(dist(_rng));
}

}  // namespace spool::op::kube
