// Figures for README.md ("Cost, measured"): 1000 sequential puts, 1000 sequential CAS txns,
// and the latency from a put to the watch's next() returning its event, against the real etcd
// of tests/integration/etcd_process.h on this machine. The bounds asserted are loose (a slow CI
// disk must not fail them); the figures are printed.
#include "broker/etcd/client.h"
#include "broker/etcd/tests/test_util.h"
#include "tests/integration/etcd_process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace spool::broker::etcd::testing {
namespace {

using clock_type = std::chrono::steady_clock;

struct figures {
    double puts_s = 0;
    double txns_s = 0;
    std::vector<double> watch_ms;  // put -> next(), each sample
};

net::awaitable<result<figures>> measure(client& c) {
    figures f;
    auto start = clock_type::now();
    for (int i = 0; i < 1000; ++i) {
        CO_TRY(rev, co_await c.put("/m/put", std::to_string(i)));
        (void)rev;
    }
    f.puts_s = std::chrono::duration<double>(clock_type::now() - start).count();

    // The metadata store's write: compare the record's mod_revision, put the new one.
    CO_TRY(base, co_await c.put("/m/cas", "0"));
    int64_t revision = base;
    start = clock_type::now();
    for (int i = 1; i <= 1000; ++i) {
        txn_request req;
        req.compares = {compare::modified_at("/m/cas", revision)};
        req.success = {put_op{"/m/cas", std::to_string(i)}};
        CO_TRY(r, co_await c.txn(std::move(req)));
        if (!r.succeeded) {
            co_return make_error_code(errc::request_failed);
        }
        revision = r.revision;
    }
    f.txns_s = std::chrono::duration<double>(clock_type::now() - start).count();

    CO_TRY(w, co_await c.watch("/m/w", {}, 0));
    for (int i = 0; i < 200; ++i) {
        start = clock_type::now();
        CO_TRY(rev, co_await c.put("/m/w", std::to_string(i)));
        for (;;) {
            CO_TRY(batch, co_await w->next());
            if (!batch.events.empty() && batch.events.back().kv.mod_revision == rev) {
                break;
            }
        }
        f.watch_ms.push_back(
            std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
    }
    co_return f;
}

TEST(etcd_client_measure, test_sequential_puts_txns_and_watch_latency) {
    spool::tests::etcd_process etcd;
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    net::io_context io;
    auto c = client::make(io.get_executor(), options_for({etcd.endpoint()}));
    auto f = run(io, measure(*c));
    ASSERT_TRUE(f) << f.error().message();
    auto& ms = f.value().watch_ms;
    std::sort(ms.begin(), ms.end());
    double p50 = ms[ms.size() / 2];
    double p99 = ms[ms.size() * 99 / 100];
    std::printf("1000 sequential puts: %.2f s (%.2f ms each)\n", f.value().puts_s,
                f.value().puts_s);
    std::printf("1000 sequential CAS txns: %.2f s (%.2f ms each)\n", f.value().txns_s,
                f.value().txns_s);
    std::printf(
        "put -> watch next(), 200 samples (includes the put's own round trip): p50 %.2f "
        "ms, p99 %.2f ms, max %.2f ms\n",
        p50, p99, ms.back());
    RecordProperty("puts_1000_s", std::to_string(f.value().puts_s));
    RecordProperty("txns_1000_s", std::to_string(f.value().txns_s));
    RecordProperty("watch_p50_ms", std::to_string(p50));
    RecordProperty("watch_p99_ms", std::to_string(p99));
    EXPECT_LT(f.value().puts_s, 20);
    EXPECT_LT(f.value().txns_s, 20);
    EXPECT_LT(p99, 1000);
}

}  // namespace
}  // namespace spool::broker::etcd::testing
