// The client against a real etcd (tests/integration/etcd_process.h): key-value calls, paging,
// transactions, leases. Watches: client_watch_test.cc; failures: client_failure_test.cc.
#include "broker/etcd/client.h"

#include "broker/etcd/tests/etcd_fixture.h"
#include "broker/etcd/tests/test_util.h"

#include <gtest/gtest.h>

#include <set>

namespace spool::broker::etcd::testing {
namespace {

class etcd_client : public etcd_fixture {};

net::awaitable<result<range_result>> put_get_delete(client& c, int64_t* put_revision,
                                                    int64_t* deleted) {
    CO_TRY(revision, co_await c.put("/t/a", "one"));
    *put_revision = revision;
    CO_TRY(again, co_await c.put("/t/a", "two"));
    EXPECT_GT(again, revision);
    CO_TRY(got, co_await c.range("/t/a"));
    EXPECT_EQ(got.kvs.size(), 1u);
    if (!got.kvs.empty()) {
        EXPECT_EQ(got.kvs[0].value, "two");
        EXPECT_EQ(got.kvs[0].create_revision, revision);
        EXPECT_EQ(got.kvs[0].mod_revision, again);
        EXPECT_EQ(got.kvs[0].version, 2);
    }
    CO_TRY(old, co_await c.range("/t/a", {}, revision));
    EXPECT_EQ(old.kvs.at(0).value, "one");  // a read at an older revision sees the older value
    CO_TRY(n, co_await c.delete_range("/t/a"));
    *deleted = n;
    co_return co_await c.range("/t/a");
}

TEST_F(etcd_client, test_put_range_and_delete) {
    int64_t put_revision = 0;
    int64_t deleted = 0;
    auto after = run(_io, put_get_delete(*_client, &put_revision, &deleted));
    ASSERT_TRUE(after) << after.error().message();
    EXPECT_GT(put_revision, 0);
    EXPECT_EQ(deleted, 1);
    EXPECT_TRUE(after.value().kvs.empty());
    EXPECT_EQ(after.value().count, 0);
}

std::string key_of(int i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "/p/k%05d", i);
    return buf;
}

// Puts [from, to) in transactions of 100 puts (etcd allows 128 ops per txn).
net::awaitable<result<int64_t>> put_keys(client& c, int from, int to) {
    int64_t revision = 0;
    for (int i = from; i < to; i += 100) {
        txn_request req;
        for (int k = i; k < std::min(to, i + 100); ++k) {
            req.success.push_back(put_op{key_of(k), "v" + std::to_string(k)});
        }
        CO_TRY(r, co_await c.txn(std::move(req)));
        revision = r.revision;
    }
    co_return revision;
}

// Writes keys that sort between the pages while get_prefix is paging; revisions[i] is the
// revision of key_of(i * 60) + "x".
net::awaitable<void> write_between(client& c, std::vector<int64_t>* revisions) {
    for (int i = 0; i < 40; ++i) {
        auto r = co_await c.put(key_of(i * 60) + "x", "late");
        if (!r) {
            co_return;
        }
        revisions->push_back(r.value());
    }
}

net::awaitable<result<range_result>> page_while_writing(client& c,
                                                        std::vector<int64_t>* revisions) {
    net::co_spawn(co_await net::this_coro::executor, write_between(c, revisions), net::detached);
    auto all = co_await c.get_prefix("/p/", 1000);
    co_await sleep_for(500ms);  // let the writer finish before its vector goes out of scope
    co_return all;
}

TEST_F(etcd_client, test_get_prefix_pages_2500_keys_at_one_revision) {
    auto last = run(_io, put_keys(*_client, 0, 2500));
    ASSERT_TRUE(last) << last.error().message();
    std::vector<int64_t> revisions;
    auto all = run(_io, page_while_writing(*_client, &revisions));
    ASSERT_TRUE(all) << all.error().message();
    ASSERT_EQ(revisions.size(), 40u);
    const int64_t at = all.value().revision;
    EXPECT_GE(at, last.value());
    // Later pages read at the first page's revision: a key written after it is not there, even
    // one that sorts into a page read after it was written; one written before it is.
    std::set<std::string> keys;
    for (const auto& kv : all.value().kvs) {
        EXPECT_LE(kv.mod_revision, at);
        keys.insert(kv.key);
    }
    size_t before = 0;
    int late_in_later_pages = 0;
    for (int i = 0; i < 40; ++i) {
        bool written_before = revisions[i] <= at;
        before += written_before ? 1 : 0;
        EXPECT_EQ(keys.count(key_of(i * 60) + "x"), written_before ? 1u : 0u) << i;
        late_in_later_pages += !written_before && i * 60 >= 1000 ? 1 : 0;
    }
    EXPECT_GT(late_in_later_pages, 0) << "no write landed while the later pages were read";
    EXPECT_EQ(all.value().count, static_cast<int64_t>(2500 + before));
    ASSERT_EQ(all.value().kvs.size(), 2500 + before);
    EXPECT_FALSE(all.value().more);
    for (int i = 0; i < 2500; ++i) {
        ASSERT_EQ(keys.count(key_of(i)), 1u) << i;
    }
    for (size_t i = 1; i < all.value().kvs.size(); ++i) {
        ASSERT_LT(all.value().kvs[i - 1].key, all.value().kvs[i].key);  // sorted, no repeats
    }
    auto now = run(_io, _client->get_prefix("/p/", 1000));
    ASSERT_TRUE(now);
    EXPECT_EQ(now.value().kvs.size(), 2500u + 40u);
}

struct txn_case {
    compare cmp;
    bool succeeds;
};

net::awaitable<result<std::vector<bool>>> run_txn_cases(client& c, std::vector<txn_case>* cases,
                                                        int64_t* lease_out) {
    CO_TRY(l, co_await c.grant_lease(30s));
    *lease_out = l.id;
    CO_TRY(created, co_await c.put("/x/k", "v1"));
    CO_TRY(modified, co_await c.put("/x/k", "v2", l.id));
    using t = compare::target;
    using o = compare::op;
    *cases = {
        {compare::absent("/x/none"), true},
        {compare::absent("/x/k"), false},
        {compare::created_at("/x/k", created), true},
        {compare::modified_at("/x/k", modified), true},
        {compare::modified_at("/x/k", created), false},
        {{"/x/k", t::version, o::equal, 2, {}, {}}, true},
        {{"/x/k", t::version, o::not_equal, 2, {}, {}}, false},
        {{"/x/k", t::version, o::greater, 1, {}, {}}, true},
        {{"/x/k", t::version, o::less, 2, {}, {}}, false},
        {{"/x/k", t::create_revision, o::less, modified, {}, {}}, true},
        {{"/x/k", t::mod_revision, o::greater, modified, {}, {}}, false},
        {{"/x/k", t::value, o::equal, 0, "v2", {}}, true},
        {{"/x/k", t::value, o::not_equal, 0, "v2", {}}, false},
        {{"/x/k", t::value, o::greater, 0, "v1", {}}, true},
        {{"/x/k", t::lease, o::equal, l.id, {}, {}}, true},
        {{"/x/k", t::lease, o::not_equal, l.id, {}, {}}, false},
        // A range compare: every key in [/x/, /x0) has version > 0.
        {{"/x/", t::version, o::greater, 0, {}, "/x0"}, true},
    };
    std::vector<bool> taken;
    for (const auto& tc : *cases) {
        txn_request req;
        req.compares = {tc.cmp};
        req.success = {put_op{"/x/branch", "success"}, range_op{"/x/k", {}, 0}};
        req.failure = {delete_op{"/x/branch", {}}, range_op{"/x/", "/x0", 0}};
        CO_TRY(r, co_await c.txn(std::move(req)));
        taken.push_back(r.succeeded);
        CO_TRY(branch, co_await c.range("/x/branch"));
        // The branch's writes happened and its range ran inside the txn.
        EXPECT_EQ(branch.kvs.empty(), !r.succeeded);
        EXPECT_EQ(r.ranges.size(), 1u);
        if (!r.ranges.empty()) {
            EXPECT_EQ(r.ranges[0].kvs.size(), r.succeeded ? 1u : 1u);
            EXPECT_EQ(r.ranges[0].kvs.at(0).value, "v2");
            EXPECT_EQ(r.ranges[0].revision, r.revision);
        }
    }
    co_return taken;
}

TEST_F(etcd_client, test_txn_takes_the_branch_each_compare_kind_selects) {
    std::vector<txn_case> cases;
    int64_t lease_id = 0;
    auto taken = run(_io, run_txn_cases(*_client, &cases, &lease_id));
    ASSERT_TRUE(taken) << taken.error().message();
    ASSERT_EQ(taken.value().size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        EXPECT_EQ(taken.value()[i], cases[i].succeeds)
            << "case " << i << " key " << cases[i].cmp.key;
    }
}

TEST_F(etcd_client, test_txn_with_too_many_ops_is_refused) {
    txn_request req;
    for (int i = 0; i < 200; ++i) {
        req.success.push_back(put_op{key_of(i), "v"});
    }
    auto r = run(_io, _client->txn(std::move(req)));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::request_failed);
    auto after = run(_io, _client->get_prefix("/p/"));  // the client still works
    ASSERT_TRUE(after);
    EXPECT_TRUE(after.value().kvs.empty());
}

struct lease_trace {
    lease granted;
    int64_t renewed_ttl = 0;
    bool key_before = false;
    std::error_code after_expiry;
    bool key_after = true;
    double expired_after_s = 0;
};

net::awaitable<result<lease_trace>> lease_expires(client& c) {
    lease_trace t;
    CO_TRY(l, co_await c.grant_lease(2s));
    t.granted = l;
    CO_TRY(rev, co_await c.put("/l/key", "leased", l.id));
    (void)rev;
    CO_TRY(ttl, co_await c.keep_alive_once(l.id));
    t.renewed_ttl = ttl;
    CO_TRY(before, co_await c.range("/l/key"));
    t.key_before = !before.kvs.empty() && before.kvs[0].lease == l.id;
    // No more keep-alives: etcd expires the lease after its TTL (checked every 500 ms).
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 40; ++i) {
        co_await sleep_for(250ms);
        CO_TRY(now, co_await c.range("/l/key"));
        if (now.kvs.empty()) {
            t.key_after = false;
            break;
        }
    }
    t.expired_after_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    t.after_expiry = observe(co_await c.keep_alive_once(l.id)).ec;
    co_return t;
}

TEST_F(etcd_client, test_lease_keep_alive_then_expiry_removes_the_key) {
    auto t = run(_io, lease_expires(*_client));
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_NE(t.value().granted.id, 0);
    EXPECT_EQ(t.value().granted.ttl_seconds, 2);
    EXPECT_GE(t.value().renewed_ttl, 1);
    EXPECT_TRUE(t.value().key_before);
    EXPECT_FALSE(t.value().key_after) << "the leased key outlived its lease";
    EXPECT_GE(t.value().expired_after_s, 1.0);
    EXPECT_EQ(t.value().after_expiry, errc::lease_not_found);
}

net::awaitable<result<observed>> revoke_twice(client& c, bool* key_gone) {
    CO_TRY(l, co_await c.grant_lease(60s));
    CO_TRY(rev, co_await c.put("/l/revoked", "x", l.id));
    (void)rev;
    auto revoked = co_await c.revoke_lease(l.id);
    if (!revoked) {
        co_return revoked.error();
    }
    CO_TRY(now, co_await c.range("/l/revoked"));
    *key_gone = now.kvs.empty();
    co_return observe(co_await c.revoke_lease(l.id));
}

TEST_F(etcd_client, test_revoke_deletes_leased_keys_and_a_second_revoke_is_lease_not_found) {
    bool key_gone = false;
    auto second = run(_io, revoke_twice(*_client, &key_gone));
    ASSERT_TRUE(second) << second.error().message();
    EXPECT_TRUE(key_gone);
    EXPECT_EQ(second.value().ec, errc::lease_not_found);
    auto unknown = run(_io, _client->keep_alive_once(0x1234567));
    EXPECT_EQ(unknown.error(), errc::lease_not_found);
}

net::awaitable<result<range_result>> big_value(client& c, std::string value) {
    CO_TRY(rev, co_await c.put("/big", value));
    (void)rev;
    co_return co_await c.range("/big");
}

TEST_F(etcd_client, test_one_mib_value_round_trips_and_two_mib_is_refused) {
    std::string value(1024 * 1024, '\0');
    for (size_t i = 0; i < value.size(); ++i) {
        value[i] = static_cast<char>((i * 131 + i / 977) % 256);
    }
    auto got = run(_io, big_value(*_client, value));
    ASSERT_TRUE(got) << got.error().message();
    ASSERT_EQ(got.value().kvs.size(), 1u);
    EXPECT_TRUE(got.value().kvs[0].value == value);

    // Beyond etcd's --max-request-bytes (1.5 MiB): refused by etcd, and the client goes on.
    auto too_big = run(_io, _client->put("/big", std::string(2 * 1024 * 1024, 'x')));
    ASSERT_FALSE(too_big);
    EXPECT_EQ(too_big.error(), errc::request_failed) << too_big.error().message();
    auto still = run(_io, _client->range("/big"));
    ASSERT_TRUE(still);
    EXPECT_TRUE(still.value().kvs.at(0).value == value);
}

net::awaitable<result<observed>> compact_then_read_old(client& c) {
    CO_TRY(first, co_await c.put("/c/k", "1"));
    CO_TRY(second, co_await c.put("/c/k", "2"));
    auto compacted = co_await c.compact(second);
    if (!compacted) {
        co_return compacted.error();
    }
    co_return observe(co_await c.range("/c/k", {}, first));
}

TEST_F(etcd_client, test_compact_makes_older_revisions_unreadable) {
    auto old = run(_io, compact_then_read_old(*_client));
    ASSERT_TRUE(old) << old.error().message();
    EXPECT_EQ(old.value().ec, errc::compacted);
}

}  // namespace
}  // namespace spool::broker::etcd::testing
