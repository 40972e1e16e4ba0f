#include "broker/runtime/shard_mailbox.h"

#include "common/log.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace spool::broker::runtime {

namespace {

int make_eventfd() {
    int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
        // At construction, before the broker serves: a boundary where an exception is the answer.
        throw std::runtime_error(std::string("shard mailbox: eventfd: ") + std::strerror(errno));
    }
    return fd;
}

}  // namespace

shard_mailbox::shard_mailbox(boost::asio::io_context& ctx) : _wakeup(ctx, make_eventfd()) {}

shard_mailbox::~shard_mailbox() {
    task* t = nullptr;
    while (_queue.pop(t)) {
        delete t;
    }
}

void shard_mailbox::start() {
    wait_for_mail();
}

void shard_mailbox::push(task* t) {
    // Never fails: the queue allocates a node when its free list is empty.
    _queue.push(t);
    // The shard sets _waiting only after it has drained; whoever clears it owes the wake-up.
    if (_waiting.exchange(false, std::memory_order_acq_rel)) {
        uint64_t one = 1;
        while (::write(_wakeup.native_handle(), &one, sizeof one) < 0 && errno == EINTR) {
        }
        // EAGAIN means the counter is full: the shard is woken anyway.
    }
}

void shard_mailbox::wait_for_mail() {
    _wakeup.async_wait(
        boost::asio::posix::stream_descriptor::wait_read,
        [this](const boost::system::error_code& ec) {
            if (ec) {
                return;  // the io_context is stopping or the mailbox is gone
            }
            uint64_t count = 0;
            while (::read(_wakeup.native_handle(), &count, sizeof count) < 0 && errno == EINTR) {
            }
            wait_for_mail();
        });
    drain();
}

void shard_mailbox::drain() {
    for (;;) {
        task* t = nullptr;
        while (_queue.pop(t)) {
            std::unique_ptr<task> owned(t);
            owned->run();
            _delivered.fetch_add(1, std::memory_order_relaxed);
        }
        // An exchange, not a store: it reads what a poster's exchange wrote, so that poster's
        // push is visible to the check below. A task pushed between the last pop and here found
        // _waiting false and wrote nothing: look once more, and take the wake-up back if nobody
        // has used it yet.
        _waiting.exchange(true, std::memory_order_acq_rel);
        if (_queue.empty()) {
            return;
        }
        if (!_waiting.exchange(false, std::memory_order_acq_rel)) {
            return;  // a poster cleared it and wrote the eventfd: the wait will fire
        }
    }
}

}  // namespace spool::broker::runtime
