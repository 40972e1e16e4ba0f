#pragma once

// What the etcd client reports about its requests, for metrics
// (broker/metadata/controller/cluster_metrics.h turns it into Prometheus series; the client knows
// nothing of metrics). One call per finished unary request (a get_prefix is one per page) and per
// watch opened, with its outcome: an etcd::errc, std::error_code{} on success. A txn whose compares
// failed is a success here: etcd answered it.
//
// Threading: called on the client's executor, after the request finished; must not block and
// must not call back into the client. Lifecycle: the client holds it (client_options::observer)
// for its whole life.

#include <chrono>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace spool::broker::etcd {

enum class operation : uint8_t {
    range,
    put,
    delete_range,
    txn,
    compact,
    lease_grant,
    lease_keep_alive,
    lease_revoke,
    watch,  // opening a watch (until etcd confirmed it), not its stream
};

// snake_case names, the `operation` label of the metrics.
constexpr std::string_view operation_name(operation op) noexcept {
    switch (op) {
        case operation::range:
            return "range";
        case operation::put:
            return "put";
        case operation::delete_range:
            return "delete_range";
        case operation::txn:
            return "txn";
        case operation::compact:
            return "compact";
        case operation::lease_grant:
            return "lease_grant";
        case operation::lease_keep_alive:
            return "lease_keep_alive";
        case operation::lease_revoke:
            return "lease_revoke";
        case operation::watch:
            return "watch";
    }
    return "unknown";
}

class client_observer {
public:
    virtual ~client_observer() = default;
    virtual void request_done(operation op, std::error_code outcome,
                              std::chrono::nanoseconds latency) noexcept = 0;
};

// The `outcome` label: "ok", the etcd::errc name ("unavailable", "timed_out", "compacted",
// "lease_not_found", "bad_response", "request_failed", "cancelled"), or "error" for anything
// else. Defined in errc.cc.
std::string_view outcome_name(std::error_code outcome) noexcept;

// Whether etcd itself answered (any outcome but unavailable, timed_out, cancelled): the request
// reached a live etcd, even when it refused it.
bool etcd_answered(std::error_code outcome) noexcept;

}  // namespace spool::broker::etcd
