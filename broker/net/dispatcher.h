#pragma once

// The seam between the network layer (framing, ordering, writing) and the Kafka handlers
// (header parsing, version checks, the APIs). net/ knows nothing about Kafka beyond the
// 4-byte size prefix; the dispatcher gets each request frame (without the prefix) and says
// what to send back.
//
// Ordering: requests of one connection start in order. Request N+1 starts only after request
// N reached its ordering point: it called request_context::mark_ordered() (e.g. a Fetch about
// to long-poll) or completed. Responses are always written in request order.

#include "broker/model/principal.h"
#include "broker/runtime/asio.h"
#include "broker/runtime/cancellation.h"
#include "protocol/wire/writer.h"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace spool::broker::net {

// An encoded response frame (size prefix, response header, body: protocol/api/framing.h's
// encode_response builds it) with file slices to splice in at buffer positions
// (protocol/wire/writer.h draws the layout). The size prefix counts the slices too.
struct response {
    std::vector<uint8_t> buffer;
    std::vector<protocol::wire::splice> splices;

    size_t size() const {
        size_t n = buffer.size();
        for (const auto& s : splices) {
            n += s.slice.length;
        }
        return n;
    }
};

enum class request_outcome : uint8_t {
    respond,          // write `response`
    no_response,      // nothing to send (acks=0 Produce); keep reading
    close,            // close the connection after earlier responses (e.g. acks=0 error)
    close_malformed,  // as close, and count the request as malformed
};

struct handled {
    request_outcome outcome = request_outcome::respond;
    struct response response;
    // With respond: close the connection once the response is written (a failed SASL
    // authentication, as Kafka does).
    bool close_after = false;
};

// What a protocol layer keeps per connection beyond connection_info (the handlers' SASL
// exchange). net only owns it and drops it with the connection.
class connection_state {
public:
    virtual ~connection_state() = default;
};

struct connection_info {
    uint64_t id = 0;
    size_t shard = 0;
    std::string peer;  // "address:port"
    // Name of the listener the connection came in on ("PLAINTEXT"): Metadata answers every
    // broker's endpoint of that listener.
    std::string listener = "PLAINTEXT";
    // The listener's security protocol (listener.security.protocol.map): PLAINTEXT, SSL,
    // SASL_PLAINTEXT or SASL_SSL.
    std::string security_protocol = "PLAINTEXT";
    // Who the client is; the connection updates it when TLS or SASL authenticates the client.
    model::kafka_principal principal;
    // False on SASL listeners until SaslAuthenticate succeeded: requests are capped at
    // sasl.server.max.receive.size and the dispatcher serves only the SASL exchange.
    bool authenticated = true;
    // The dispatcher's per-connection state (SASL), created on first use.
    std::shared_ptr<connection_state> state;
};

// Per-request view handed to the dispatcher; valid until the dispatch coroutine completes.
class request_context {
public:
    using clock = std::chrono::steady_clock;

    request_context(connection_info& conn, std::vector<uint8_t> frame,
                    std::function<void()> on_ordered, clock::time_point received_at = clock::now(),
                    runtime::request_cancellation* cancellation = nullptr)
        : _conn(conn),
          _frame(std::move(frame)),
          _on_ordered(std::move(on_ordered)),
          _received_at(received_at),
          _cancellation(cancellation) {}

    const connection_info& connection() const { return _conn; }
    // For the authentication exchange, which sets the principal and the session state. Requests
    // of one connection run on its shard; the SASL ones only before others are served.
    connection_info& mutable_connection() { return _conn; }
    std::span<const uint8_t> frame() const { return _frame; }
    // When the last byte of the frame was read off the socket: the start of the request's
    // queue time and latency.
    clock::time_point received_at() const { return _received_at; }
    // Lets the next request of this connection start (idempotent).
    void mark_ordered() {
        if (_on_ordered) {
            auto f = std::move(_on_ordered);
            _on_ordered = nullptr;
            f();
        }
    }
    // Set when the connection closed while this request runs: nobody will read its answer, so
    // a waiting handler stops waiting (see cancellation.h). Null outside a connection.
    runtime::request_cancellation* cancellation() const { return _cancellation; }
    bool cancelled() const { return _cancellation != nullptr && _cancellation->cancelled(); }

private:
    connection_info& _conn;
    std::vector<uint8_t> _frame;
    std::function<void()> _on_ordered;
    clock::time_point _received_at;
    runtime::request_cancellation* _cancellation;
};

class request_dispatcher {
public:
    virtual ~request_dispatcher() = default;
    // Runs on the connection's shard. Must not throw for bad input (return close_malformed);
    // an escaping exception closes the connection and is logged.
    virtual boost::asio::awaitable<handled> dispatch(request_context& ctx) = 0;
};

}  // namespace spool::broker::net
