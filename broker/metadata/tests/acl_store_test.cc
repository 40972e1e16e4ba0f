// ACL bindings in the metadata stores: the embedded store's journal and snapshot file keep them
// across a restart, the etcd layout names one key per binding, and the etcd state folds puts and
// deletes into the snapshot's index (sharing it while nothing changed).

#include "broker/metadata/embedded/embedded_store.h"
#include "broker/metadata/embedded/metadata_journal.h"
#include "broker/metadata/etcd/etcd_layout.h"
#include "broker/metadata/etcd/etcd_state.h"
#include "broker/metadata/records.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

namespace spool::broker::metadata {
namespace {

namespace fs = std::filesystem;
using security::acl_binding;
using security::acl_operation;
using security::acl_permission;
using security::pattern_type;
using security::resource_type;

acl_binding read_topic(std::string name, pattern_type p = pattern_type::literal) {
    return {resource_type::topic, std::move(name),      p, "User:alice", "*",
            acl_operation::read,  acl_permission::allow};
}
acl_binding deny_group(std::string name) {
    return {resource_type::group, std::move(name),    pattern_type::prefixed, "User:*",
            "10.0.0.1",           acl_operation::all, acl_permission::deny};
}

TEST(acl_records, test_json_round_trips_and_refuses_what_create_acls_refuses) {
    for (const auto& b : {read_topic("t"), deny_group("g-")}) {
        auto back = acl_from_json(to_json(b));
        ASSERT_TRUE(back);
        EXPECT_EQ(back.value(), b);
    }
    auto j = to_json(read_topic("t"));
    j["pattern_type"] = "Match";
    EXPECT_FALSE(acl_from_json(j));
    j = to_json(read_topic("t"));
    j["operation"] = "Reed";
    EXPECT_FALSE(acl_from_json(j));
    j = to_json(read_topic("t"));
    j.erase("host");
    EXPECT_FALSE(acl_from_json(j));
    EXPECT_FALSE(acl_from_json(nlohmann::json::array()));
}

TEST(acl_journal, test_diff_apply_and_codec_carry_bindings) {
    cluster_state before;
    before.acls = security::with_bindings(before.acls, {read_topic("a"), read_topic("b")});
    cluster_state after = before;
    EXPECT_TRUE(journal::diff(before, after, 1).changes.empty()) << "the index is shared";
    after.acls = security::without_bindings(after.acls, {read_topic("a")});
    after.acls = security::with_bindings(after.acls, {deny_group("g-")});
    auto record = journal::diff(before, after, 7);
    EXPECT_EQ(record.changes.size(), 2U);
    auto line = journal::encode(record);
    auto decoded = journal::decode(std::string_view(line).substr(0, line.size() - 1));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded.value(), record);
    cluster_state replayed = before;
    ASSERT_TRUE(journal::apply(replayed, decoded.value()));
    EXPECT_EQ(replayed.acls->bindings(), after.acls->bindings());
}

class acl_embedded_test : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::path(::testing::TempDir()) /
              ("acls_" +
               std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir);
    }
    void TearDown() override { fs::remove_all(dir); }
    std::unique_ptr<embedded_store> open_store() {
        auto s = embedded_store::open(dir);
        EXPECT_TRUE(s) << s.error().message();
        return std::move(s).value();
    }
    fs::path dir;
};

TEST_F(acl_embedded_test, test_bindings_survive_a_restart_from_journal_and_from_snapshot) {
    {
        auto s = open_store();
        ASSERT_TRUE(wait_for(s->create_acls({read_topic("t"), deny_group("g-")})));
        ASSERT_TRUE(wait_for(s->create_acls({read_topic("t")})));  // already there: no change
        ASSERT_TRUE(wait_for(s->delete_acls({deny_group("g-")})));
        ASSERT_TRUE(wait_for(s->create_acls({read_topic("p-", pattern_type::prefixed)})));
        EXPECT_EQ(s->snapshot()->acls->size(), 2U);
    }
    auto expected =
        std::vector<acl_binding>{read_topic("p-", pattern_type::prefixed), read_topic("t")};
    std::sort(expected.begin(), expected.end());
    {
        auto s = open_store();  // the clean stop folded the journal into the snapshot
        EXPECT_EQ(s->snapshot()->acls->bindings(), expected);
        ASSERT_TRUE(wait_for(s->delete_acls({read_topic("t")})));
    }
    auto s = open_store();
    EXPECT_EQ(s->snapshot()->acls->bindings(),
              std::vector<acl_binding>{read_topic("p-", pattern_type::prefixed)});
}

const etcd_layout::keys k{"/p"};

TEST(acl_etcd_layout, test_one_key_per_binding_under_acls) {
    auto key = k.acl(read_topic("t"));
    EXPECT_TRUE(key.starts_with("/p/acls/"));
    EXPECT_EQ(key, k.acl(read_topic("t")));
    EXPECT_NE(key, k.acl(deny_group("t")));
    auto parsed = etcd_layout::parse(k, key);
    EXPECT_EQ(parsed.what, etcd_layout::parsed_key::kind::acl);
    EXPECT_EQ(etcd_layout::parse(k, "/p/acls/").what, etcd_layout::parsed_key::kind::unknown);
    EXPECT_EQ(etcd_layout::parse(k, "/p/acls/zz").what, etcd_layout::parsed_key::kind::unknown);
    auto back = etcd_layout::decode_acl(etcd_layout::encode(deny_group("g")));
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), deny_group("g"));
    EXPECT_FALSE(etcd_layout::decode_acl("{"));
}

etcd::watch_event event(etcd::watch_event::kind kind, std::string key, std::string value,
                        int64_t rev) {
    etcd::watch_event e;
    e.type = kind;
    e.kv.key = std::move(key);
    e.kv.value = std::move(value);
    e.kv.mod_revision = rev;
    e.kv.create_revision = rev;
    return e;
}

TEST(acl_etcd_state, test_puts_and_deletes_rebuild_the_index_and_bad_values_are_ignored) {
    etcd_state st(k);
    st.reset({}, 1);
    auto empty = st.build();
    EXPECT_TRUE(empty->acls->empty());
    using kind = etcd::watch_event::kind;
    st.apply({event(kind::put, k.acl(read_topic("t")), etcd_layout::encode(read_topic("t")), 2),
              event(kind::put, k.acl(deny_group("g")), etcd_layout::encode(deny_group("g")), 3),
              // A value its key does not name, and one that does not decode: ignored.
              event(kind::put, k.acl(read_topic("x")), etcd_layout::encode(read_topic("y")), 4),
              event(kind::put, k.acl(read_topic("z")), "not json", 5)});
    auto two = st.build();
    EXPECT_EQ(two->acls->size(), 2U);
    EXPECT_TRUE(two->acls->contains(read_topic("t")));
    EXPECT_TRUE(empty->acls->empty()) << "an older snapshot keeps its index";
    st.apply({event(kind::put, k.topic("other"), "garbage", 6)});
    EXPECT_EQ(st.build()->acls, two->acls) << "no binding changed: the index is shared";
    st.apply({event(kind::del, k.acl(read_topic("t")), "", 7)});
    auto one = st.build();
    EXPECT_EQ(one->acls->bindings(), std::vector<acl_binding>{deny_group("g")});
}

}  // namespace
}  // namespace spool::broker::metadata
