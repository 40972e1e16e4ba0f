// Watches against a real etcd: live events in revision order, replay from an old revision, a
// compacted start revision, cancel(), and 1000 events without loss.
#include "broker/etcd/client.h"
#include "broker/etcd/tests/etcd_fixture.h"
#include "broker/etcd/tests/test_util.h"

#include <gtest/gtest.h>

namespace spool::broker::etcd::testing {
namespace {

class etcd_watch : public etcd_fixture {};

// Reads batches until `want` events arrived (or an error); progress notifications are skipped.
net::awaitable<result<std::vector<watch_event>>> collect(watch_stream& w, size_t want) {
    std::vector<watch_event> out;
    while (out.size() < want) {
        CO_TRY(batch, co_await w.next());
        for (auto& ev : batch.events) {
            out.push_back(std::move(ev));
        }
    }
    co_return out;
}

net::awaitable<result<std::vector<watch_event>>> watch_live_changes(client& c) {
    CO_TRY(w, co_await c.watch("/w/", prefix_end("/w/"), 0));
    CO_TRY(r1, co_await c.put("/w/a", "1"));
    CO_TRY(r2, co_await c.put("/other", "not watched"));
    CO_TRY(r3, co_await c.put("/w/b", "2"));
    CO_TRY(n, co_await c.delete_range("/w/a"));
    (void)r1, (void)r2, (void)r3, (void)n;
    co_return co_await collect(*w, 3);
}

TEST_F(etcd_watch, test_prefix_watch_sees_puts_and_deletes_in_revision_order) {
    auto events = run(_io, watch_live_changes(*_client));
    ASSERT_TRUE(events) << events.error().message();
    const auto& ev = events.value();
    ASSERT_EQ(ev.size(), 3u);
    EXPECT_EQ(ev[0].type, watch_event::kind::put);
    EXPECT_EQ(ev[0].kv.key, "/w/a");
    EXPECT_EQ(ev[0].kv.value, "1");
    EXPECT_EQ(ev[1].type, watch_event::kind::put);
    EXPECT_EQ(ev[1].kv.key, "/w/b");
    EXPECT_EQ(ev[2].type, watch_event::kind::del);
    EXPECT_EQ(ev[2].kv.key, "/w/a");
    EXPECT_LT(ev[0].kv.mod_revision, ev[1].kv.mod_revision);
    EXPECT_LT(ev[1].kv.mod_revision, ev[2].kv.mod_revision);
}

net::awaitable<result<std::vector<watch_event>>> replay_from(client& c, int64_t* first_out) {
    CO_TRY(first, co_await c.put("/r/a", "1"));
    *first_out = first;
    CO_TRY(second, co_await c.put("/r/a", "2"));
    CO_TRY(n, co_await c.delete_range("/r/a"));
    (void)second, (void)n;
    // Opened after the changes: a start revision in the past replays them.
    CO_TRY(w, co_await c.watch("/r/", prefix_end("/r/"), first));
    co_return co_await collect(*w, 3);
}

TEST_F(etcd_watch, test_watch_from_an_old_revision_replays_history) {
    int64_t first = 0;
    auto events = run(_io, replay_from(*_client, &first));
    ASSERT_TRUE(events) << events.error().message();
    ASSERT_EQ(events.value().size(), 3u);
    EXPECT_EQ(events.value()[0].kv.mod_revision, first);
    EXPECT_EQ(events.value()[0].kv.value, "1");
    EXPECT_EQ(events.value()[1].kv.value, "2");
    EXPECT_EQ(events.value()[2].type, watch_event::kind::del);
}

struct compacted_watch {
    int64_t compacted_at = 0;
    observed first_next;
    observed second_next;
    int64_t compact_revision = 0;
};

net::awaitable<result<compacted_watch>> watch_compacted(client& c) {
    compacted_watch out;
    CO_TRY(first, co_await c.put("/c/a", "1"));
    CO_TRY(second, co_await c.put("/c/a", "2"));
    CO_TRY(third, co_await c.put("/c/a", "3"));
    (void)second;
    if (auto done = co_await c.compact(third); !done) {
        co_return done.error();
    }
    out.compacted_at = third;
    CO_TRY(w, co_await c.watch("/c/", prefix_end("/c/"), first));
    out.first_next = observe(co_await w->next());
    out.second_next = observe(co_await w->next());  // the watch stays failed
    out.compact_revision = w->compact_revision();
    co_return out;
}

TEST_F(etcd_watch, test_watch_from_a_compacted_revision_fails_with_compacted) {
    auto r = run(_io, watch_compacted(*_client));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r.value().first_next.ec, errc::compacted);
    EXPECT_EQ(r.value().second_next.ec, errc::compacted);
    EXPECT_EQ(r.value().compact_revision, r.value().compacted_at);
}

net::awaitable<void> cancel_later(watch_stream* w, client* c, std::chrono::milliseconds after) {
    co_await sleep_for(after);
    if (w != nullptr) {
        w->cancel();
    } else {
        c->cancel();
    }
}

struct cancel_trace {
    observed next;
    double waited_ms = 0;
};

// A next() pending on an idle watch, then cancel() from another coroutine: the watch's own
// cancel() (by_client false) or the client's (by_client true).
net::awaitable<result<cancel_trace>> cancel_pending_next(client& c, bool by_client) {
    CO_TRY(w, co_await c.watch("/idle/", prefix_end("/idle/"), 0));
    auto ex = co_await net::this_coro::executor;
    net::co_spawn(ex, cancel_later(by_client ? nullptr : w.get(), &c, 300ms), net::detached);
    auto start = std::chrono::steady_clock::now();
    cancel_trace t;
    t.next = observe(co_await w->next());
    t.waited_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    co_return t;
}

TEST_F(etcd_watch, test_cancel_ends_a_pending_next_with_cancelled) {
    auto r = run(_io, cancel_pending_next(*_client, false), 5s);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r.value().next.ec, errc::cancelled);
    EXPECT_GE(r.value().waited_ms, 250);  // it waited (no busy loop returning early)
    auto still = run(_io, _client->put("/idle/x", "1"));  // the client itself is fine
    EXPECT_TRUE(still);
}

TEST_F(etcd_watch, test_client_cancel_ends_pending_watches_and_calls) {
    auto r = run(_io, cancel_pending_next(*_client, true), 5s);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r.value().next.ec, errc::cancelled);
    auto after = run(_io, _client->put("/idle/x", "1"));
    ASSERT_FALSE(after);
    EXPECT_EQ(after.error(), errc::cancelled);
}

net::awaitable<result<int>> count_cpu_of_idle_next(client& c, std::clock_t* cpu) {
    CO_TRY(w, co_await c.watch("/quiet/", prefix_end("/quiet/"), 0));
    auto ex = co_await net::this_coro::executor;
    net::co_spawn(ex, cancel_later(w.get(), &c, 1000ms), net::detached);
    std::clock_t before = std::clock();
    auto r = co_await w->next();
    *cpu = std::clock() - before;
    co_return r ? 1 : 0;
}

TEST_F(etcd_watch, test_an_idle_next_does_not_spin) {
    std::clock_t cpu = 0;
    auto r = run(_io, count_cpu_of_idle_next(*_client, &cpu), 5s);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r.value(), 0);  // cancelled, no batch
    // One second of waiting costs (far) less than 100 ms of CPU when nothing polls.
    EXPECT_LT(double(cpu) / CLOCKS_PER_SEC, 0.1);
}

net::awaitable<void> put_many(client& c, int n) {
    for (int i = 0; i < n; ++i) {
        auto rev = co_await c.put("/many/k" + std::to_string(i % 17), std::to_string(i));
        if (!rev) {
            ADD_FAILURE() << "put " << i << ": " << rev.error().message();
            co_return;
        }
    }
}

net::awaitable<result<std::vector<watch_event>>> thousand_events(client& c) {
    CO_TRY(w, co_await c.watch("/many/", prefix_end("/many/"), 0));
    // The writer runs beside the reader: events arrive while batches are being read.
    net::co_spawn(co_await net::this_coro::executor, put_many(c, 1000), net::detached);
    co_return co_await collect(*w, 1000);
}

TEST_F(etcd_watch, test_a_thousand_events_arrive_in_order_without_loss) {
    auto events = run(_io, thousand_events(*_client));
    ASSERT_TRUE(events) << events.error().message();
    ASSERT_EQ(events.value().size(), 1000u);
    for (int i = 0; i < 1000; ++i) {
        const auto& ev = events.value()[i];
        ASSERT_EQ(ev.kv.value, std::to_string(i));
        ASSERT_EQ(ev.kv.key, "/many/k" + std::to_string(i % 17));
        if (i > 0) {
            ASSERT_EQ(ev.kv.mod_revision, events.value()[i - 1].kv.mod_revision + 1);
        }
    }
}

}  // namespace
}  // namespace spool::broker::etcd::testing
