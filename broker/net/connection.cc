#include "broker/net/connection.h"

#include "broker/net/frame_buffer.h"
#include "common/log.h"
#include "common/log_limiter.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace spool::broker::net {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
// A frame up to this size is allocated at once and read in one go; most requests fit. A larger
// claim gets memory only as its bytes arrive (frame_buffer).
constexpr size_t first_frame_chunk = 64 * 1024;
// Bytes of a frame's chunks copied into contiguous memory at a time: about 50 us on this machine
// (broker/net/bench/frame_buffer_bench.cc), well under what a small request takes.
constexpr size_t linearise_step_bytes = 256 * 1024;
// How often a paused reader checks whether the peer hung up: a closed client's connection
// (and whatever it holds) is released within this, well under a second.
}  // namespace

connection::connection(asio::ip::tcp::socket socket, connection_info info,
                       request_dispatcher& dispatcher, probe& probe, connection_limits limits,
                       request_bytes_budget& budget, hangup_watch& hangups,
                       std::function<void(uint64_t)> on_closed,
                       std::function<void()> on_socket_closed, tls_material tls)
    : _stream(std::move(socket), std::move(tls.context)),
      _principal_rules(std::move(tls.rules)),
      _info(std::move(info)),
      _dispatcher(dispatcher),
      _probe(probe),
      _limits(limits),
      _budget(budget),
      _hangups(hangups),
      _on_closed(std::move(on_closed)),
      _on_socket_closed(std::move(on_socket_closed)),
      _progress(_stream.socket().get_executor()) {
    _probe.connection_opened();
}

connection::~connection() {
    close();
    if (_on_closed) {
        _on_closed(_info.id);
    }
}

void connection::start() {
    auto& socket = _stream.socket();
    error_code ec;
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    // sendfile(2) must not block the shard: with the fd non-blocking it returns EAGAIN and
    // the writer waits for writability instead.
    socket.native_non_blocking(true, ec);
    auto self = shared_from_this();
    asio::co_spawn(socket.get_executor(), read_loop(self), asio::detached);
    asio::co_spawn(socket.get_executor(), write_loop(self), asio::detached);
    if (_limits.max_idle.count() > 0) {
        asio::co_spawn(socket.get_executor(), idle_watch(self, _limits.max_idle), asio::detached);
    }
    if (_stream.tls() && _limits.tls_handshake_timeout.count() > 0) {
        asio::co_spawn(socket.get_executor(), handshake_watch(self, _limits.tls_handshake_timeout),
                       asio::detached);
    }
}

void connection::begin_drain() {
    if (_draining || _closed) {
        return;
    }
    _draining = true;
    _hangups.unwatch(_info.id);
    // SHUT_RD wakes the pending read with end-of-file; queued responses are still written.
    error_code ec;
    _stream.socket().shutdown(asio::ip::tcp::socket::shutdown_receive, ec);
    _progress.notify();
}

void connection::close() {
    if (_closed) {
        return;
    }
    _closed = true;
    _reading_done = true;
    // Counted here rather than in the destructor: a request still running (a long poll) keeps
    // the object alive, but the client is gone.
    _probe.connection_closed();
    // Before the fd is closed: the shard's hang-up poll must never see a reused descriptor.
    _hangups.unwatch(_info.id);
    error_code ec;
    _stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    _stream.socket().close(ec);
    if (_on_socket_closed) {
        auto fn = std::move(_on_socket_closed);
        _on_socket_closed = nullptr;
        fn();
    }
    // Nobody will read the answers: requests still running stop waiting and free their memory.
    for (auto& s : _pending) {
        if (!s->done) {
            s->cancellation.cancel();
        }
    }
    _budget.forget(_info.id);
    _budget.release(_budget_held);
    _budget_held = 0;
    _progress.notify();
}

asio::awaitable<void> connection::paused_wait() {
    _read_paused = true;
    // While draining, our own SHUT_RD reads as a hang-up: let in-flight requests answer.
    if (!_closed && !_draining) {
        _hangups.watch(_info.id, _stream.socket().native_handle(), [weak = weak_from_this()] {
            auto self = weak.lock();
            if (!self || self->_closed || self->_draining || !self->_read_paused) {
                return;
            }
            log::get("net")->debug(
                "connection {} from {}: peer closed while requests were pending, closing",
                self->_info.id, self->_info.peer);
            self->close();
        });
    }
    co_await _progress.wait();
    _read_paused = false;
    _hangups.unwatch(_info.id);
}

asio::awaitable<bool> connection::reserve_budget(size_t size, size_t& reserved) {
    reserved = 0;
    // A small frame of a connection holding nothing else never waits (request_bytes_budget.h).
    if (_budget.unlimited() ||
        (size <= request_bytes_budget::small_frame_bytes && _pending.empty())) {
        co_return true;
    }
    while (!_closed && !_draining && !_budget.try_reserve(_info.id, size)) {
        _budget.wait(_info.id, [weak = weak_from_this()] {
            if (auto self = weak.lock()) {
                self->_progress.notify();
            }
        });
        co_await paused_wait();
    }
    if (_closed || _draining) {
        _budget.forget(_info.id);
        co_return false;
    }
    reserved = size;
    _budget_held += size;
    co_return true;
}

asio::awaitable<bool> connection::secure() {
    if (!_stream.tls()) {
        _secured = true;
        co_return true;
    }
    auto log = log::get("net");
    error_code ec;
    co_await _stream.handshake(ec);
    if (_closed) {
        co_return false;
    }
    _secured = true;
    if (ec) {
        // A scanner or a client without our CA: the descriptor goes at once, and a line a second
        // at most, so a flood of garbage handshakes does not flood the log.
        static log::limiter failures;
        if (auto held_back = failures.allow()) {
            log->info("connection {} from {} on {}: TLS handshake failed: {} ({} more failed "
                      "handshakes since the last line)",
                      _info.id, _info.peer, _info.listener, ec.message(), *held_back);
        }
        close();
        co_return false;
    }
    // SSL listeners authenticate by certificate; SASL_SSL ones by SASL, after the handshake.
    if (_info.security_protocol == "SSL") {
        if (auto subject = _stream.peer_subject()) {
            auto name = _principal_rules ? _principal_rules->apply(*subject) : subject;
            if (!name) {
                log->info("connection {} from {}: no ssl.principal.mapping.rules rule matches the "
                          "certificate subject '{}', closing",
                          _info.id, _info.peer, *subject);
                close();
                co_return false;
            }
            _info.principal.name = std::move(*name);
        }
    }
    co_return true;
}

asio::awaitable<void> connection::read_loop(std::shared_ptr<connection> self) {
    auto log = log::get("net");
    if (!co_await self->secure()) {
        co_return;
    }
    for (;;) {
        while (!self->_closed && !self->_draining &&
               (self->_pending.size() >= self->_limits.queued_max_requests ||
                (!self->_pending.empty() &&
                 self->_pending_bytes >= self->_limits.max_pending_request_bytes))) {
            co_await self->paused_wait();
        }
        if (self->_closed || self->_draining) {
            break;
        }
        std::array<uint8_t, 4> prefix{};
        error_code ec;
        co_await self->_stream.read(asio::buffer(prefix), ec);
        if (ec) {
            if (!self->_draining) {
                // The peer closed or reset (or close() ran): as Kafka, close now rather than
                // keep the socket until parked requests (long polls) end on their own.
                self->close();
            }
            break;
        }
        int32_t size =
            static_cast<int32_t>((uint32_t(prefix[0]) << 24) | (uint32_t(prefix[1]) << 16) |
                                 (uint32_t(prefix[2]) << 8) | uint32_t(prefix[3]));
        int32_t max_size = self->_info.authenticated
                               ? self->_limits.max_request_bytes
                               : self->_limits.max_unauthenticated_request_bytes;
        if (size < 0 || size > max_size) {
            self->_probe.malformed_request();
            log->warn("connection {} from {}: request size {} outside [0, {}]{}, closing",
                      self->_info.id, self->_info.peer, size, max_size,
                      self->_info.authenticated ? "" : " (sasl.server.max.receive.size)");
            self->close();
            break;
        }
        size_t reserved = 0;
        if (!co_await self->reserve_budget(size_t(size), reserved)) {
            break;
        }
        std::vector<uint8_t> frame = co_await self->read_body(size_t(size), ec);
        if (ec) {
            if (ec != asio::error::operation_aborted) {
                // A truncated frame: the peer went away mid-request.
                self->_probe.malformed_request();
            }
            if (!self->_draining) {
                self->close();
            }
            break;
        }
        auto received_at = std::chrono::steady_clock::now();
        self->_probe.request_received(4 + frame.size());
        self->_last_request = received_at;
        auto s = std::make_shared<slot>();
        s->frame_bytes = frame.size();
        s->budget_bytes = reserved;
        self->_pending_bytes += s->frame_bytes;
        self->_pending.push_back(s);
        asio::co_spawn(self->_stream.socket().get_executor(),
                       process(self, s, std::move(frame), received_at), asio::detached);
        while (!s->ordered && !self->_closed && !self->_draining) {
            co_await self->paused_wait();
        }
    }
    self->_reading_done = true;
    self->_progress.notify();
}

asio::awaitable<std::vector<uint8_t>> connection::read_body(size_t size, error_code& ec) {
    // A small frame is read in one go. A larger one is held in chunks as its bytes arrive (what
    // the socket holds, waiting for readability when it holds nothing), so a peer that only
    // claims a large frame never gets that memory and trickled bytes are never moved on the
    // shard; it becomes contiguous once, when its end is in the socket (frame_buffer.h).
    std::vector<uint8_t> frame;
    if (size <= first_frame_chunk) {
        frame.resize(size);
        co_await _stream.read(asio::buffer(frame), ec);
        co_return frame;
    }
    frame_buffer body(size);
    while (!body.complete()) {
        size_t ready = 0;
        if (_stream.tls()) {
            // Asio and OpenSSL hold received bytes the socket no longer shows, so the socket's
            // count says nothing: read what comes, at most a TLS record's worth at a time.
            ready = stream::tls_record_bytes;
        } else {
            ready = _stream.socket().available(ec);
            if (!ec && ready == 0) {
                co_await _stream.socket().async_wait(
                    asio::ip::tcp::socket::wait_read,
                    asio::redirect_error(asio::use_awaitable, ec));
                if (!ec) {
                    // 0 now: end of stream, the read says so.
                    ready = _stream.socket().available(ec);
                }
            }
        }
        if (ec) {
            co_return frame;
        }
        ready = std::max<size_t>(ready, 1);
        // The frame's end is in the socket: its chunks move into one buffer, a step at a time,
        // the shard's other connections running in between.
        while (body.must_linearise(ready) && !body.linearise(linearise_step_bytes)) {
            co_await asio::post(_stream.socket().get_executor(), asio::use_awaitable);
        }
        auto buffers = body.prepare(ready);
        size_t n = co_await _stream.read_some(buffers, ec);
        if (ec) {
            co_return frame;
        }
        body.commit(n);
    }
    co_return body.release();
}

asio::awaitable<void> connection::process(std::shared_ptr<connection> self, std::shared_ptr<slot> s,
                                          std::vector<uint8_t> frame,
                                          std::chrono::steady_clock::time_point received_at) {
    connection* conn = self.get();
    slot* raw = s.get();
    request_context ctx(
        self->_info, std::move(frame),
        [conn, raw] {
            raw->ordered = true;
            conn->_progress.notify();
        },
        received_at, &s->cancellation);
    try {
        s->result = co_await self->_dispatcher.dispatch(ctx);
    } catch (const std::exception& e) {
        log::get("net")->error("connection {}: request failed: {}", self->_info.id, e.what());
        s->result.outcome = request_outcome::close;
    }
    ctx.mark_ordered();
    s->done = true;
    self->_progress.notify();
}

asio::awaitable<void> connection::handshake_watch(std::weak_ptr<connection> weak,
                                                  std::chrono::milliseconds limit) {
    auto first = weak.lock();
    if (!first || first->_closed || first->_secured) {
        co_return;
    }
    asio::steady_timer timer(first->_stream.socket().get_executor());
    first.reset();
    timer.expires_after(limit);
    error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    auto self = weak.lock();
    if (!self || self->_closed || self->_secured) {
        co_return;
    }
    // Closing aborts the pending handshake; secure() then logs nothing more (it sees _closed).
    static log::limiter timeouts;
    if (auto held_back = timeouts.allow()) {
        log::get("net")->info(
            "connection {} from {} on {}: no TLS handshake within {} ms, closing ({} more since "
            "the last line)",
            self->_info.id, self->_info.peer, self->_info.listener, limit.count(), *held_back);
    }
    self->close();
}

asio::awaitable<void> connection::idle_watch(std::weak_ptr<connection> weak,
                                             std::chrono::milliseconds max_idle) {
    // Holds only a weak reference between checks, so a closed connection is freed at once. The
    // coroutine first runs after start() returned, when the connection may already be gone
    // (closed at once, or destroyed at shutdown): check before touching it.
    auto first = weak.lock();
    if (!first || first->_closed) {
        co_return;
    }
    asio::steady_timer timer(first->_stream.socket().get_executor());
    first.reset();
    for (;;) {
        timer.expires_after(std::max(max_idle / 4, std::chrono::milliseconds(10)));
        error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        auto self = weak.lock();
        if (!self || self->_closed) {
            co_return;
        }
        if (self->_pending.empty() &&
            std::chrono::steady_clock::now() - self->_last_request >= max_idle) {
            log::get("net")->debug("connection {} idle for {} ms, closing", self->_info.id,
                                   max_idle.count());
            self->close();
            co_return;
        }
    }
}

asio::awaitable<void> connection::write_loop(std::shared_ptr<connection> self) {
    for (;;) {
        while (!self->_closed && (self->_pending.empty() || !self->_pending.front()->done)) {
            if (self->_pending.empty() && self->_reading_done) {
                break;
            }
            co_await self->_progress.wait();
        }
        if (self->_closed || self->_pending.empty()) {
            break;
        }
        auto s = std::move(self->_pending.front());
        self->_pending.pop_front();
        self->_pending_bytes -= s->frame_bytes;
        self->_budget_held -= s->budget_bytes;
        self->_budget.release(s->budget_bytes);
        self->_progress.notify();  // the reader may be waiting for queue space
        auto outcome = s->result.outcome;
        if (outcome == request_outcome::respond) {
            if (!co_await self->write_response(s->result.response) || s->result.close_after) {
                break;
            }
            continue;
        }
        if (outcome == request_outcome::no_response) {
            continue;
        }
        if (outcome == request_outcome::close_malformed) {
            self->_probe.malformed_request();
        }
        break;
    }
    self->close();
}

asio::awaitable<bool> connection::write_response(const response& r) {
    // Runs of buffer bytes alternate with file slices.
    size_t pos = 0;
    error_code ec;
    for (size_t i = 0; i <= r.splices.size(); ++i) {
        size_t end = i < r.splices.size() ? r.splices[i].at : r.buffer.size();
        if (end > pos) {
            co_await _stream.write(asio::buffer(r.buffer.data() + pos, end - pos), ec);
            if (ec) {
                co_return false;
            }
        }
        pos = end;
        if (i < r.splices.size() && !co_await _stream.write_file(r.splices[i].slice, _info.id)) {
            co_return false;
        }
    }
    _probe.response_sent(r.size());
    co_return true;
}

}  // namespace spool::broker::net
