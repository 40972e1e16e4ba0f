#pragma once

// What the coordinator tests share: the last record written for an id, and a marker sender
// that holds the markers until the test finishes them.

#include "broker/coordinator/tests/test_support.h"
#include "broker/txn/marker_sender.h"
#include "broker/txn/record_codec.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace spool::broker::txn::testing {

// The state of the last record written for id (nullopt: a tombstone).
inline std::optional<txn_metadata> last(const coordinator::testing::memory_log& log,
                                        const std::string& id) {
    for (auto it = log.records.rbegin(); it != log.records.rend(); ++it) {
        if (decode_key(it->key).value() == id) {
            if (!it->value) {
                return std::nullopt;
            }
            return decode_value(id, *it->value).value();
        }
    }
    return std::nullopt;
}

class fake_markers final : public marker_sender {
public:
    void send(marker_request request, std::function<bool()> still_ours,
              std::function<void(std::error_code)> done) override {
        sent.push_back(request);
        pending.push_back({std::move(request), std::move(still_ours), std::move(done)});
    }
    void finish_all() {
        auto p = std::move(pending);
        pending.clear();
        for (auto& x : p) {
            x.done({});
        }
    }
    struct in_flight {
        marker_request request;
        std::function<bool()> still_ours;
        std::function<void(std::error_code)> done;
    };
    std::vector<marker_request> sent;
    std::vector<in_flight> pending;
};

}  // namespace spool::broker::txn::testing
