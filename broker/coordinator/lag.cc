#include "broker/coordinator/lag.h"

#include <algorithm>

namespace spool::broker::coordinator {

std::vector<lag_entry> compute_lag(const std::vector<committed_entry>& committed,
                                   const high_watermark_fn& hw) {
    std::vector<lag_entry> out;
    out.reserve(committed.size());
    for (const auto& c : committed) {
        auto mark = hw(c.tp);
        if (!mark) {
            continue;
        }
        // A committed offset past the high watermark (log truncated, or an offset reset to
        // "latest" racing a produce) is no lag, never a negative one.
        out.push_back({c.group, c.tp, c.offset, *mark, std::max<int64_t>(0, *mark - c.offset)});
    }
    return out;
}

}  // namespace spool::broker::coordinator
