#include "broker/net/hangup_watch.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <poll.h>

#include <vector>

namespace spool::broker::net {

namespace asio = boost::asio;

hangup_watch::hangup_watch(asio::any_io_executor executor, std::chrono::milliseconds interval)
    : _executor(std::move(executor)), _interval(interval), _state(std::make_shared<state>()) {}

hangup_watch::~hangup_watch() {
    // The timer loop holds the state; it ends at its next wake-up.
    _state->stopped = true;
    _state->entries.clear();
}

void hangup_watch::watch(uint64_t id, int fd, std::function<void()> on_hangup) {
    _state->entries[id] = entry{fd, std::move(on_hangup)};
    if (!_state->running) {
        _state->running = true;
        asio::co_spawn(_executor, run(_state, _interval), asio::detached);
    }
}

void hangup_watch::unwatch(uint64_t id) {
    _state->entries.erase(id);
}

size_t hangup_watch::watched() const {
    return _state->entries.size();
}

asio::awaitable<void> hangup_watch::run(std::shared_ptr<state> s,
                                        std::chrono::milliseconds interval) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    std::vector<pollfd> fds;
    std::vector<uint64_t> ids;
    while (!s->stopped && !s->entries.empty()) {
        timer.expires_after(interval);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (s->stopped) {
            break;
        }
        fds.clear();
        ids.clear();
        for (const auto& [id, e] : s->entries) {
            fds.push_back(pollfd{e.fd, POLLRDHUP, 0});
            ids.push_back(id);
        }
        if (fds.empty() || ::poll(fds.data(), fds.size(), 0) <= 0) {
            continue;
        }
        for (size_t i = 0; i < fds.size(); ++i) {
            if ((fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0) {
                continue;
            }
            // Looked up again: an earlier callback of this pass may have unwatched it.
            auto it = s->entries.find(ids[i]);
            if (it == s->entries.end() || it->second.fd != fds[i].fd) {
                continue;
            }
            auto on_hangup = std::move(it->second.on_hangup);
            s->entries.erase(it);
            if (on_hangup) {
                on_hangup();
            }
        }
    }
    s->running = false;
}

}  // namespace spool::broker::net
