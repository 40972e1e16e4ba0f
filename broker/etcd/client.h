#pragma once

// An etcd v3 client over etcd's gRPC-JSON gateway (HTTP/1.1 + JSON on the client port, the same
// API as gRPC: /v3/kv/range, /v3/kv/put, /v3/kv/deleterange, /v3/kv/txn, /v3/lease/grant,
// /v3/lease/keepalive, /v3/lease/revoke, /v3/lease/timetolive, /v3/watch), built on
// Boost.Beast and C++20 coroutines. Why the gateway and not gRPC: see README.md.
//
// Keys and values are raw bytes here (the gateway's base64 is the client's business); int64s
// travel as JSON strings, as the gateway writes them.
//
// Endpoints: a request goes to the endpoint that last answered; on a connection error or a
// timeout it moves to the next one, until every endpoint failed once (errc::unavailable).
// Watches: one long-lived streamed HTTP response per watch; events arrive as etcd pushes them
// (nothing is polled). A watch whose start revision was compacted fails with errc::compacted
// and compact_revision() tells from where a reload must resume.
//
// Lifecycle: construct on an executor (normally one io_context thread of its own: the client
// never runs on a shard); every coroutine must be awaited from that executor; cancel() makes
// every pending operation finish with errc::cancelled, and nothing may be called afterwards.
// Threading: not thread-safe; one executor.

#include "broker/etcd/observer.h"
#include "common/result.h"

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility> (GCC 12).
// clang-format off
#include <utility>
// clang-format on

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

namespace spool::broker::etcd {

enum class errc : int {
    ok = 0,
    unavailable = 1,      // no endpoint could be reached / answered in time
    timed_out = 2,        // the request's own timeout passed (after failing over)
    compacted = 3,        // a watch or range asked for a revision etcd has compacted away
    lease_not_found = 4,  // keepalive/revoke of a lease etcd no longer has (it expired)
    bad_response = 5,     // etcd answered something this client cannot parse
    request_failed = 6,   // etcd refused the request (an error body: too many ops, too large)
    cancelled = 7,        // cancel() was called, or the watch was closed
};
const std::error_category& error_category() noexcept;
inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

struct client_options {
    std::vector<std::string> endpoints;  // "http://host:port" or "https://host:port"
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds request_timeout{5000};
    // Hears of every finished request (observer.h); none when null.
    std::shared_ptr<client_observer> observer;
    // The TLS client context for each new connection to an https endpoint (called at connect,
    // so a rebuilt context, after a certificate rotation, applies to new connections). Empty:
    // https endpoints cannot be reached (errc::unavailable, logged).
    std::function<std::shared_ptr<boost::asio::ssl::context>()> tls;
};

struct key_value {
    std::string key;
    std::string value;
    int64_t create_revision = 0;
    int64_t mod_revision = 0;
    int64_t version = 0;
    int64_t lease = 0;
};

struct range_result {
    int64_t revision = 0;  // the store's revision the result was read at
    std::vector<key_value> kvs;
    bool more = false;  // only with a limit
    int64_t count = 0;
};

// A compare of a txn: key's <target> <op> value. For range compares set range_end.
struct compare {
    enum class target { version, create_revision, mod_revision, value, lease };
    enum class op { equal, not_equal, less, greater };
    std::string key;
    target what = target::version;
    op how = op::equal;
    int64_t number = 0;  // version / revisions / lease
    std::string value;   // target::value
    std::string range_end;

    static compare created_at(std::string key, int64_t create_revision) {
        return {std::move(key), target::create_revision, op::equal, create_revision, {}, {}};
    }
    static compare absent(std::string key) { return created_at(std::move(key), 0); }
    static compare modified_at(std::string key, int64_t mod_revision) {
        return {std::move(key), target::mod_revision, op::equal, mod_revision, {}, {}};
    }
};

struct put_op {
    std::string key;
    std::string value;
    int64_t lease = 0;
};
struct delete_op {
    std::string key;
    std::string range_end;  // empty: just key
};
struct range_op {
    std::string key;
    std::string range_end;
    int64_t limit = 0;
};
using txn_op = std::variant<put_op, delete_op, range_op>;

struct txn_request {
    std::vector<compare> compares;
    std::vector<txn_op> success;
    std::vector<txn_op> failure;
};
struct txn_result {
    bool succeeded = false;
    int64_t revision = 0;
    // The results of the taken branch's range ops, in order.
    std::vector<range_result> ranges;
};

struct lease {
    int64_t id = 0;
    int64_t ttl_seconds = 0;
};

struct watch_event {
    enum class kind { put, del };
    kind type = kind::put;
    key_value kv;  // for del: key and mod_revision (the deletion's revision)
};
// One response of a watch stream: all events of one or more revisions, in revision order.
// An empty batch with progress_notify set says the watch has seen everything up to revision.
struct watch_batch {
    int64_t revision = 0;
    std::vector<watch_event> events;
    bool progress_notify = false;
};

class watch_stream {
public:
    virtual ~watch_stream() = default;
    // The next batch; errc::compacted (see compact_revision()), errc::unavailable on a lost
    // connection (resume with a new watch from the last revision + 1), errc::cancelled.
    virtual boost::asio::awaitable<result<watch_batch>> next() = 0;
    virtual int64_t compact_revision() const = 0;
    // Closes the stream; a pending next() finishes with errc::cancelled.
    virtual void cancel() = 0;
};

// The end of a prefix range: the prefix with its last byte incremented ("" for "\0").
std::string prefix_end(std::string_view prefix);

class client {
public:
    template <class T>
    using op = boost::asio::awaitable<result<T>>;

    static std::unique_ptr<client> make(boost::asio::any_io_executor ex, client_options options);
    virtual ~client() = default;

    // [key, range_end) at `revision` (0 = latest); limit 0 = all.
    virtual op<range_result> range(std::string key, std::string range_end = {},
                                   int64_t revision = 0, int64_t limit = 0) = 0;
    // Every key under prefix at one revision, paged internally (page_size keys per request).
    virtual op<range_result> get_prefix(std::string prefix, int64_t page_size = 1000) = 0;
    virtual op<int64_t> put(std::string key, std::string value, int64_t lease = 0) = 0;
    // Deleted key count.
    virtual op<int64_t> delete_range(std::string key, std::string range_end = {}) = 0;
    virtual op<txn_result> txn(txn_request request) = 0;
    // Compacts the history up to `revision` (POST /v3/kv/compaction): later reads and watches
    // at a revision below it fail with errc::compacted; errc::compacted if already compacted.
    virtual op<void> compact(int64_t revision) = 0;

    virtual op<lease> grant_lease(std::chrono::seconds ttl) = 0;
    // Renews once; the remaining TTL, or errc::lease_not_found when etcd no longer has it.
    virtual op<int64_t> keep_alive_once(int64_t lease_id) = 0;
    virtual op<void> revoke_lease(int64_t lease_id) = 0;

    // Watches [key, range_end) from start_revision (0 = now), with progress notifications.
    virtual op<std::unique_ptr<watch_stream>> watch(std::string key, std::string range_end,
                                                    int64_t start_revision) = 0;

    // Finishes every pending request and watch with errc::cancelled.
    virtual void cancel() = 0;
};

}  // namespace spool::broker::etcd

template <>
struct std::is_error_code_enum<spool::broker::etcd::errc> : std::true_type {};
