#pragma once

// Work handed to a shard by other threads without taking the shard's scheduler lock. A
// background pool's threads (background_pool.h) receive their work the same way.
//
// Why: asio::post into an io_context locks that context's scheduler mutex and, when the shard's
// thread is waiting in epoll, interrupts the reactor (an epoll_ctl syscall) before unlocking.
// A poster preempted there leaves the shard blocked on its own mutex until the poster runs again;
// the metadata writer, the checkpoint writer and the storage threads run at nice 19, so that
// wait lasts whole time slices of every other thread. During a CreateTopics/DeleteTopics loop a
// shard blocked on its scheduler mutex 550 times a second (perf sched_switch, issue #14 item 7).
//
// Here a poster pushes onto a lock-free queue and, only when the shard is waiting for mail, writes
// an eventfd the shard's reactor watches. The shard drains the queue on its own thread; nobody
// else ever holds a lock the shard needs.
//
// The queue is Dmitry Vyukov's intrusive multi-producer single-consumer queue: a push is one
// atomic exchange and one store, wait-free, with no allocation beyond the task itself. Not
// Boost.Lockfree's queue (used first): its tagged pointers hide its nodes from LeakSanitizer and
// its freelist reads from ThreadSanitizer, which then reported races in every test that hops
// between shards; this one is plain std::atomic pointers, which both sanitizers follow.
//
// Lifecycle: made by shard_pool for each shard before its thread starts; start() on the shard's
// io_context (arms the eventfd wait); tasks left when the io_context stops are destroyed unrun
// when the mailbox is destroyed (as asio destroys queued handlers). Destroy before the io_context.
// Threading: post() from any thread; start() and the draining on the shard only.

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace spool::broker::runtime {

class shard_mailbox {
public:
    explicit shard_mailbox(boost::asio::io_context& ctx);
    ~shard_mailbox();
    shard_mailbox(const shard_mailbox&) = delete;
    shard_mailbox& operator=(const shard_mailbox&) = delete;

    // Arms the first wait; on the shard's io_context, before or as it starts running.
    void start();
    // On the owning thread (from a task): runs nothing more and stops waiting for mail, so the
    // io_context's run() can return once its other work is done. What is posted later is
    // destroyed unrun with the mailbox (a background pool's stop()).
    void close();

    // Runs fn on the shard, after what was posted before it by the same thread. fn may be
    // move-only; it is destroyed unrun if the shard has stopped.
    template <class F>
    void post(F&& fn) {
        push(new task_of<std::decay_t<F>>(std::forward<F>(fn)));
    }

    // Tasks run so far (tests).
    uint64_t delivered() const { return _delivered.load(std::memory_order_relaxed); }

private:
    struct node {
        std::atomic<node*> next{nullptr};
    };
    struct task : node {
        virtual ~task() = default;
        virtual void run() = 0;
    };
    template <class F>
    struct task_of final : task {
        explicit task_of(F f) : fn(std::move(f)) {}
        void run() override { std::move(fn)(); }
        F fn;
    };

    void push(task* t);
    void link(node* n);
    // The oldest task, or nullptr when there is none or the one after the last is still being
    // linked by a poster (whose wake-up then follows its push).
    task* pop();
    void wait_for_mail();
    void drain();
    // Runs and frees one popped task.
    void deliver(task* t);

    // Posters exchange _last; the shard alone reads from _first. _stub keeps the list non-empty.
    alignas(64) std::atomic<node*> _last;
    alignas(64) node* _first;
    node _stub;
    boost::asio::posix::stream_descriptor _wakeup;  // an eventfd
    // True while the shard waits on the eventfd: the next poster writes it (once).
    std::atomic<bool> _waiting{false};
    std::atomic<uint64_t> _delivered{0};
    bool _closed = false;  // the owning thread's
};

}  // namespace spool::broker::runtime
