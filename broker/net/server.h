#pragma once

// The Kafka listener: accepts connections on shard 0 and hands each to the next shard in turn
// (round robin), where it lives until closed. No thread per connection.
//
// Lifecycle: construct -> start() (binds; returns an error message on failure) -> drain(timeout)
// on SIGTERM: stop accepting, stop reading new requests, let in-flight ones answer, then close
// whatever is left at the deadline. The shard_pool must be running from start() to the end
// of drain(), and outlive the server.
// Threading: start()/drain()/bound_port() from the main thread; the rest runs on shards.

#include "broker/net/connection.h"
#include "broker/net/connection_quotas.h"
#include "broker/net/dispatcher.h"
#include "broker/net/listener.h"
#include "broker/net/probe.h"
#include "broker/net/request_bytes_budget.h"
#include "broker/net/tls_context.h"
#include "broker/runtime/async_event.h"
#include "broker/runtime/shard_pool.h"

#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace spool::broker::net {

// A listener's security: its protocol (listener.security.protocol.map) and, for SSL and
// SASL_SSL, its TLS context.
struct listener_security {
    std::string protocol = "PLAINTEXT";
    std::shared_ptr<tls_listener> tls;
};

struct server_options {
    std::vector<listener_address> listeners;
    // By listener name; a listener not named here is PLAINTEXT.
    std::map<std::string, listener_security> security;
    connection_limits limits;
    int socket_send_buffer = -1;     // -1 keeps the OS default
    int socket_receive_buffer = -1;  // -1 keeps the OS default
    // queued.max.request.bytes: request bytes all connections hold at once, split evenly over
    // the shards (request_bytes_budget.h); 0 or less is unlimited.
    int64_t queued_max_request_bytes = -1;
    // max.connections / max.connections.per.ip (connection_quotas.h).
    int64_t max_connections = INT32_MAX;
    int64_t max_connections_per_ip = INT32_MAX;
};

class server {
public:
    server(runtime::shard_pool& pool, request_dispatcher& dispatcher, probe& probe,
           server_options options);
    ~server();

    // Binds every listener. Returns "" or an error message.
    std::string start();
    // Port actually bound by acceptor i (useful with port 0); a host name that resolves to
    // several addresses has one acceptor per address.
    uint16_t bound_port(size_t i = 0) const { return _bound_ports.at(i); }
    void drain(std::chrono::milliseconds timeout);

private:
    struct shard_state {
        shard_state(size_t budget, boost::asio::any_io_executor executor)
            : budget(budget), hangups(std::move(executor), hangup_check_interval) {}
        // Live connections on this shard; touched only on that shard.
        std::unordered_map<uint64_t, std::weak_ptr<connection>> connections;
        request_bytes_budget budget;
        hangup_watch hangups;
    };
    // How often paused connections' sockets are polled for a peer hang-up.
    static constexpr std::chrono::milliseconds hangup_check_interval{200};

    static boost::asio::awaitable<void> accept_loop(server* self, size_t listener);
    void on_accepted(boost::asio::ip::tcp::socket socket, size_t shard, std::string ip,
                     const std::string& listener, tls_material tls);
    void for_each_connection(void (connection::*fn)());

    runtime::shard_pool& _pool;
    request_dispatcher& _dispatcher;
    probe& _probe;
    server_options _options;
    std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> _acceptors;
    std::vector<uint16_t> _bound_ports;
    std::vector<std::string> _acceptor_listeners;  // listener name of each acceptor
    std::vector<std::shared_ptr<shard_state>> _shards;
    std::atomic<uint64_t> _next_id{1};
    size_t _next_shard = 0;  // touched only by the accept loops on shard 0
    std::atomic<bool> _accepting{false};
    // Shared with the connections' close callbacks, which may run late in a shutdown.
    std::shared_ptr<connection_quotas> _quotas;
    // Wakes the accept loops (shard 0) when max.connections frees a slot.
    std::unique_ptr<runtime::async_event> _slot_freed;
};

}  // namespace spool::broker::net
