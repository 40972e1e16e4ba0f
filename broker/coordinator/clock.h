#pragma once

// The coordinator's only source of time, injected so the state machine runs under a fake clock
// in tests. One clock serves both session deadlines and commit timestamps, as in Kafka (whose
// GroupCoordinator uses wall-clock milliseconds for both).
//
// Threading: now() may be called from any thread; implementations must be thread-safe.

#include <chrono>
#include <cstdint>

namespace spool::broker::coordinator {

// Milliseconds since the Unix epoch.
using time_ms = std::chrono::milliseconds;

class clock {
public:
    virtual ~clock() = default;
    [[nodiscard]] virtual time_ms now() const = 0;
};

class system_clock final : public clock {
public:
    [[nodiscard]] time_ms now() const override {
        return std::chrono::duration_cast<time_ms>(
            std::chrono::system_clock::now().time_since_epoch());
    }
};

}  // namespace spool::broker::coordinator
