// The client API (client.h) over the gateway: each call is one POST of a codec-built body.
#include "broker/etcd/client.h"

#include "broker/etcd/codec.h"
#include "broker/etcd/gateway.h"
#include "broker/etcd/watch.h"

namespace spool::broker::etcd {

namespace net = boost::asio;

std::string prefix_end(std::string_view prefix) {
    std::string end(prefix);
    while (!end.empty()) {
        auto& last = reinterpret_cast<unsigned char&>(end.back());
        if (last < 0xff) {
            ++last;
            return end;
        }
        end.pop_back();  // 0xff cannot be incremented: the range ends after the shorter prefix
    }
    return std::string(1, '\0');  // no upper bound: every key from prefix on
}

namespace {

class gateway_client final : public client {
public:
    gateway_client(net::any_io_executor ex, client_options options)
        : _gateway(std::move(ex), options), _observer(std::move(options.observer)) {}

    op<range_result> range(std::string key, std::string range_end, int64_t revision,
                           int64_t limit) override {
        co_return co_await call(operation::range, "/v3/kv/range",
                                codec::encode_range(key, range_end, revision, limit),
                                codec::decode_range);
    }

    op<range_result> get_prefix(std::string prefix, int64_t page_size) override {
        const std::string end = prefix_end(prefix);
        page_size = std::max<int64_t>(1, page_size);
        // Every page reads at the first page's revision: one consistent snapshot however many
        // pages (errc::compacted if etcd compacts it away meanwhile: the caller starts again).
        auto first = co_await range(prefix, end, 0, page_size);
        if (!first) {
            co_return first.error();
        }
        range_result out = std::move(first).value();
        bool more = out.more;
        while (more && !out.kvs.empty()) {
            std::string after = out.kvs.back().key;
            after.push_back('\0');  // the smallest key greater than the last one seen
            auto page = co_await range(std::move(after), end, out.revision, page_size);
            if (!page) {
                co_return page.error();
            }
            more = page.value().more;
            for (auto& kv : page.value().kvs) {
                out.kvs.push_back(std::move(kv));
            }
        }
        out.more = false;
        co_return out;
    }

    op<int64_t> put(std::string key, std::string value, int64_t lease_id) override {
        co_return co_await call(operation::put, "/v3/kv/put",
                                codec::encode_put(key, value, lease_id), codec::decode_revision);
    }

    op<int64_t> delete_range(std::string key, std::string range_end) override {
        co_return co_await call(operation::delete_range, "/v3/kv/deleterange",
                                codec::encode_delete(key, range_end), codec::decode_deleted);
    }

    op<txn_result> txn(txn_request request) override {
        co_return co_await call(operation::txn, "/v3/kv/txn", codec::encode_txn(request),
                                codec::decode_txn);
    }

    op<void> compact(int64_t revision) override {
        co_return co_await call_void(operation::compact, "/v3/kv/compaction",
                                     codec::encode_compaction(revision));
    }

    op<lease> grant_lease(std::chrono::seconds ttl) override {
        co_return co_await call(operation::lease_grant, "/v3/lease/grant",
                                codec::encode_lease_grant(ttl.count()), codec::decode_lease_grant);
    }

    op<int64_t> keep_alive_once(int64_t lease_id) override {
        co_return co_await call(operation::lease_keep_alive, "/v3/lease/keepalive",
                                codec::encode_lease_id(lease_id), codec::decode_keep_alive);
    }

    op<void> revoke_lease(int64_t lease_id) override {
        co_return co_await call_void(operation::lease_revoke, "/v3/lease/revoke",
                                     codec::encode_lease_id(lease_id));
    }

    op<std::unique_ptr<watch_stream>> watch(std::string key, std::string range_end,
                                            int64_t start_revision) override {
        const auto started = clock::now();
        auto opened = co_await gateway_watch::open(_gateway, std::move(key), std::move(range_end),
                                                   start_revision);
        report(operation::watch, opened ? std::error_code{} : opened.error(), started);
        co_return opened;
    }

    void cancel() override { _gateway.cancel(); }

private:
    using clock = std::chrono::steady_clock;

    gateway _gateway;
    std::shared_ptr<client_observer> _observer;

    void report(operation op, std::error_code outcome, clock::time_point started) {
        if (_observer) {
            _observer->request_done(op, outcome, clock::now() - started);
        }
    }

    // One POST and the decoding of its answer.
    template <class T>
    op<T> call(operation op, std::string_view path, std::string body,
               result<T> (*decode)(std::string_view)) {
        const auto started = clock::now();
        auto answer = co_await _gateway.call(path, std::move(body));
        if (!answer) {
            report(op, answer.error(), started);
            co_return answer.error();
        }
        auto decoded = decode(answer.value());
        report(op, decoded ? std::error_code{} : decoded.error(), started);
        co_return decoded;
    }
    op<void> call_void(operation op, std::string_view path, std::string body) {
        const auto started = clock::now();
        auto answer = co_await _gateway.call(path, std::move(body));
        report(op, answer ? std::error_code{} : answer.error(), started);
        if (!answer) {
            co_return answer.error();
        }
        co_return success();
    }
};

}  // namespace

std::unique_ptr<client> client::make(net::any_io_executor ex, client_options options) {
    return std::make_unique<gateway_client>(std::move(ex), std::move(options));
}

}  // namespace spool::broker::etcd
