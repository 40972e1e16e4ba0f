#pragma once

// One client connection: reads size-prefixed frames, hands each to the dispatcher, and writes
// the responses in request order.
//
//     frame = int32 size (big-endian, 0 <= size <= socket.request.max.bytes) | size bytes
//
// A size prefix out of range closes the connection before anything is allocated for the
// body. Three coroutines share the connection, all on its shard:
//   read_loop   reads frames; starts request N+1 only after request N reached its ordering
//               point (see dispatcher.h); stops reading while queued_max_requests responses
//               are pending or the shard's request_bytes_budget is spent (TCP backpressure
//               instead of unbounded memory).
//   process     one per request: runs the dispatcher, stores the result in the request's slot.
//   write_loop  writes completed slots in order: buffer bytes, and file slices with
//               sendfile(2) (through the TLS stream on TLS listeners, stream.h).
// On a TLS listener the reader first runs the TLS handshake; on an SSL listener the client
// certificate's subject, mapped by ssl.principal.mapping.rules, becomes the principal.
//
// Lifecycle: created by the server on accept, kept alive by its coroutines (shared_ptr);
// begin_drain() stops reading new requests and lets pending ones finish; close() stops
// everything: the socket is closed at once and every request still running is cancelled
// (request_cancellation), so a parked request frees its memory promptly. A peer that closes its
// end is closed too (as Kafka does), also while the reader is paused: hangup_watch polls the
// socket for POLLRDHUP then. Threading: every member is touched only on the connection's shard.

#include "broker/net/dispatcher.h"
#include "broker/net/hangup_watch.h"
#include "broker/net/probe.h"
#include "broker/net/request_bytes_budget.h"
#include "broker/net/stream.h"
#include "broker/net/tls_context.h"
#include "broker/runtime/asio.h"
#include "broker/runtime/async_event.h"
#include "broker/runtime/cancellation.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>

namespace spool::broker::net {

struct connection_limits {
    int32_t max_request_bytes = 104857600;
    // sasl.server.max.receive.size: the largest frame read while connection_info::authenticated
    // is false (a SASL listener before the client authenticated).
    int32_t max_unauthenticated_request_bytes = 524288;
    size_t queued_max_requests = 500;
    // Request frames of one connection held at once (read, not yet answered). Requests that
    // reach their ordering point early (fetch long-polls, produce once its appends are queued)
    // let the next one be read; this keeps a fast producer from parking hundreds of megabytes
    // in the broker when the disk is slower than the network. One request is always allowed.
    size_t max_pending_request_bytes = 16 * 1024 * 1024;
    // connections.max.idle.ms: a connection with no request for this long and nothing pending
    // is closed; zero disables the check.
    std::chrono::milliseconds max_idle{600000};
    // ssl.handshake.timeout.ms: on a TLS listener, a client that has not finished its handshake
    // this long after it connected is closed (left to the idle check, connections.max.idle.ms,
    // a flood of half-handshakes would hold its descriptors for 10 minutes by default).
    std::chrono::milliseconds tls_handshake_timeout{10000};
};

class connection : public std::enable_shared_from_this<connection> {
public:
    // budget: the shard's queued.max.request.bytes share (outlives the connection).
    // on_socket_closed runs once, when the socket is closed (connection quotas).
    // tls: the listener's TLS context and principal rules; empty for plaintext listeners.
    connection(boost::asio::ip::tcp::socket socket, connection_info info,
               request_dispatcher& dispatcher, probe& probe, connection_limits limits,
               request_bytes_budget& budget, hangup_watch& hangups,
               std::function<void(uint64_t)> on_closed,
               std::function<void()> on_socket_closed = nullptr, tls_material tls = {});
    ~connection();

    // Spawns the coroutines on the socket's executor.
    void start();
    void begin_drain();
    void close();

    const connection_info& info() const { return _info; }

private:
    struct slot {
        size_t frame_bytes = 0;
        size_t budget_bytes = 0;  // reserved from the shard's request_bytes_budget
        handled result;
        runtime::request_cancellation cancellation;
        bool ordered = false;
        bool done = false;
    };

    static boost::asio::awaitable<void> read_loop(std::shared_ptr<connection> self);
    static boost::asio::awaitable<void> write_loop(std::shared_ptr<connection> self);
    // The TLS handshake and the certificate's principal; false when the connection closed.
    boost::asio::awaitable<bool> secure();
    // Closes the connection if its TLS handshake is not done within the limit.
    static boost::asio::awaitable<void> handshake_watch(std::weak_ptr<connection> weak,
                                                        std::chrono::milliseconds limit);
    static boost::asio::awaitable<void> idle_watch(std::weak_ptr<connection> weak,
                                                   std::chrono::milliseconds max_idle);
    // Waits for _progress while the reader cannot read; a peer hang-up is noticed meanwhile.
    boost::asio::awaitable<void> paused_wait();
    // Reserves a frame of `size` bytes from the budget, waiting while it is spent; false when
    // the connection closed meanwhile.
    boost::asio::awaitable<bool> reserve_budget(size_t size, size_t& reserved);
    // Reads the body of a frame of `size` bytes (its prefix already read); on error, ec is set
    // and the bytes are dropped.
    boost::asio::awaitable<std::vector<uint8_t>> read_body(size_t size,
                                                           boost::system::error_code& ec);
    static boost::asio::awaitable<void> process(std::shared_ptr<connection> self,
                                                std::shared_ptr<slot> s, std::vector<uint8_t> frame,
                                                std::chrono::steady_clock::time_point received_at);
    boost::asio::awaitable<bool> write_response(const response& r);

    stream _stream;
    std::shared_ptr<const security::principal_rules> _principal_rules;
    connection_info _info;
    request_dispatcher& _dispatcher;
    probe& _probe;
    connection_limits _limits;
    request_bytes_budget& _budget;
    hangup_watch& _hangups;  // the shard's: watches this socket while the reader is paused
    std::function<void(uint64_t)> _on_closed;
    std::function<void()> _on_socket_closed;

    std::deque<std::shared_ptr<slot>> _pending;
    size_t _pending_bytes = 0;  // sum of _pending's frame_bytes
    size_t _budget_held = 0;    // reserved from _budget: pending slots plus the frame being read
    runtime::async_event
        _progress;  // a slot completed or was ordered, the reader ended, or space freed
    bool _reading_done = false;
    // The reader waits (ordering, limits, budget): the shard's hangup_watch polls the socket.
    bool _read_paused = false;
    bool _draining = false;
    std::chrono::steady_clock::time_point _last_request = std::chrono::steady_clock::now();
    bool _closed = false;
    bool _secured = false;  // the TLS handshake finished (or there is none)
};

}  // namespace spool::broker::net
