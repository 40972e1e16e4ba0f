#pragma once

// The client's way to etcd's JSON gateway: a pool of kept-alive connections per endpoint and
// the failover rule. A call goes to the endpoint that last answered; when that endpoint cannot
// be reached (refused, reset, connect timeout), does not answer within the request timeout, or
// answers "unavailable" (no leader), the call moves on to the next endpoint, until each endpoint
// was tried once. Then the call fails with errc::timed_out when some endpoint took the whole
// request timeout, else errc::unavailable. A kept-alive connection that turns out dead (etcd
// restarted) is retried once on a fresh connection to the same endpoint.
//
// Concurrent calls each take their own connection (an idle one or a new one), so a slow call
// never queues another; at most max_idle_per_endpoint idle connections stay open.
//
// Lifecycle: owned by the client. Threading: the client's executor only.

#include "broker/etcd/client.h"
#include "broker/etcd/http_connection.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::etcd {

class gateway {
public:
    gateway(boost::asio::any_io_executor ex, client_options options);

    // POST path with body; the body of etcd's 200 answer, or the error the answer stands for.
    boost::asio::awaitable<result<std::string>> call(std::string_view path, std::string body);
    // A fresh connection to the first endpoint (in failover order) that accepts one.
    boost::asio::awaitable<result<std::unique_ptr<http_connection>>> connect_any();

    const client_options& options() const { return _options; }
    const std::shared_ptr<cancel_state>& cancellation() const { return _cancel; }
    void cancel();
    // A watch found this endpoint unresponsive: the next call starts with the one after it.
    void skip_endpoint(const endpoint& failed);

private:
    static constexpr size_t max_idle_per_endpoint = 4;

    boost::asio::any_io_executor _ex;
    client_options _options;
    std::vector<endpoint> _endpoints;
    std::vector<std::vector<std::unique_ptr<http_connection>>> _idle;  // by endpoint
    size_t _current = 0;
    std::shared_ptr<cancel_state> _cancel = std::make_shared<cancel_state>();

    boost::asio::awaitable<result<http_response>> attempt(size_t index, std::string_view path,
                                                          const std::string& body);
    boost::asio::awaitable<result<std::unique_ptr<http_connection>>> connect_to(size_t index);
    void give_back(size_t index, std::unique_ptr<http_connection> conn);
};

}  // namespace spool::broker::etcd
