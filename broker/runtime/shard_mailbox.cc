#include "broker/runtime/shard_mailbox.h"

#include "broker/runtime/cooperative_turn.h"
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

shard_mailbox::shard_mailbox(boost::asio::io_context& ctx)
    : _last(&_stub), _first(&_stub), _wakeup(ctx, make_eventfd()) {}

shard_mailbox::~shard_mailbox() {
    // No poster is left (the pool has stopped), so every task is linked and pop() finds it.
    while (task* t = pop()) {
        delete t;
    }
}

void shard_mailbox::link(node* n) {
    n->next.store(nullptr, std::memory_order_relaxed);
    node* previous = _last.exchange(n, std::memory_order_acq_rel);
    // Between the exchange and this store the list is broken after `previous`: pop() waits.
    previous->next.store(n, std::memory_order_release);
}

shard_mailbox::task* shard_mailbox::pop() {
    node* first = _first;
    node* next = first->next.load(std::memory_order_acquire);
    if (first == &_stub) {
        if (next == nullptr) {
            return nullptr;
        }
        _first = next;
        first = next;
        next = next->next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
        _first = next;
        return static_cast<task*>(first);
    }
    if (first != _last.load(std::memory_order_acquire)) {
        return nullptr;  // a poster is linking the next one
    }
    // `first` is the last task: put the stub behind it so that it can be taken.
    link(&_stub);
    next = first->next.load(std::memory_order_acquire);
    if (next != nullptr) {
        _first = next;
        return static_cast<task*>(first);
    }
    return nullptr;
}

void shard_mailbox::start() {
    wait_for_mail();
}

void shard_mailbox::close() {
    _closed = true;
    boost::system::error_code ignored;
    _wakeup.cancel(ignored);
}

void shard_mailbox::push(task* t) {
    link(t);
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
            if (ec || _closed) {
                return;  // the io_context is stopping, or the mailbox is closed or gone
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
        while (task* t = pop()) {
            deliver(t);
            if (_closed) {
                return;
            }
        }
        // An exchange, not a store: it reads what a poster's exchange wrote, so that poster's
        // push is visible to the pop below. A task linked between the last pop and here was
        // pushed by a poster that found _waiting false and wrote nothing: look once more. A push
        // still being linked is not missed: its poster exchanges _waiting after linking and, now
        // that it is true, writes the eventfd.
        _waiting.exchange(true, std::memory_order_acq_rel);
        task* late = pop();
        if (late == nullptr) {
            return;
        }
        // Keep draining; a wake-up a poster may have written meanwhile only finds nothing to do.
        _waiting.exchange(false, std::memory_order_acq_rel);
        deliver(late);
        if (_closed) {
            return;
        }
    }
}

void shard_mailbox::deliver(task* t) {
    std::unique_ptr<task> owned(t);
    owned->run();
    _delivered.fetch_add(1, std::memory_order_relaxed);
    // A drain can run many tasks in one handler: a shard's turn counts each of them.
    cooperative_turn::after_work();
}

}  // namespace spool::broker::runtime
