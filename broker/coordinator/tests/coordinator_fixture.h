#pragma once

// A group_coordinator on a manual clock and an in-memory log, with helpers that drive members
// through JoinGroup/SyncGroup the way a client would.

#include "broker/coordinator/errc.h"
#include "broker/coordinator/group_coordinator.h"
#include "broker/coordinator/tests/test_support.h"
#include "protocol/wire/writer.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

namespace spool::broker::coordinator::testing {

// ConsumerProtocolSubscription v0 for the given topics (what a Java/librdkafka consumer sends).
inline bytes subscription(std::initializer_list<std::string_view> topics) {
    bytes out;
    protocol::wire::writer w(out);
    w.write_i16(0);
    w.write_i32(static_cast<int32_t>(topics.size()));
    for (auto t : topics) {
        w.write_i16(static_cast<int16_t>(t.size()));
        w.write_raw(t);
    }
    w.write_i32(-1);  // null user data
    return out;
}

template <class T>
struct pending {
    std::shared_ptr<std::optional<T>> slot = std::make_shared<std::optional<T>>();
    [[nodiscard]] bool done() const { return slot->has_value(); }
    T& get() {
        EXPECT_TRUE(done());
        return **slot;
    }
    auto callback() {
        return [slot = slot](T r) { *slot = std::move(r); };
    }
};

class coordinator_test : public ::testing::Test {
protected:
    static constexpr int32_t session_ms = 10000;
    static constexpr int32_t rebalance_ms = 30000;

    void SetUp() override {
        cfg.initial_rebalance_delay_ms = 0;
        make();
    }

    void make() {
        coord = std::make_unique<group_coordinator>(7, cfg, clk, log, listener);
        ASSERT_FALSE(coord->load());
    }

    join_request join_req(const std::string& member_id,
                          std::optional<std::string> instance = std::nullopt,
                          std::vector<join_protocol> protocols = {}) {
        join_request r;
        r.group_id = group_id;
        r.member_id = member_id;
        r.group_instance_id = std::move(instance);
        r.require_known_member_id = true;
        r.client_id = "client";
        r.client_host = "/127.0.0.1";
        r.session_timeout_ms = session_ms;
        r.rebalance_timeout_ms = rebalance_ms;
        r.protocol_type = "consumer";
        r.protocols = protocols.empty()
                          ? std::vector<join_protocol>{{"range", subscription({"orders"})}}
                          : std::move(protocols);
        return r;
    }

    pending<join_result> join(join_request r) {
        pending<join_result> p;
        coord->join_group(std::move(r), p.callback());
        return p;
    }

    // A dynamic member's first join under KIP-394: MEMBER_ID_REQUIRED, then rejoin with the id.
    // Returns the parked (or completed) second join.
    pending<join_result> join_new(std::vector<join_protocol> protocols = {}) {
        auto first = join(join_req("", std::nullopt, protocols));
        EXPECT_TRUE(first.done());
        EXPECT_EQ(first.get().error, make_error_code(errc::member_id_required));
        EXPECT_FALSE(first.get().member_id.empty());
        return join(join_req(first.get().member_id, std::nullopt, protocols));
    }

    pending<sync_result> sync(const std::string& member, int32_t generation,
                              std::vector<sync_assignment> assignments = {}) {
        sync_request r;
        r.group_id = group_id;
        r.generation_id = generation;
        r.member_id = member;
        r.assignments = std::move(assignments);
        pending<sync_result> p;
        coord->sync_group(std::move(r), p.callback());
        return p;
    }

    std::error_code heartbeat(const std::string& member, int32_t generation,
                              std::optional<std::string> instance = std::nullopt) {
        return coord->heartbeat({group_id, generation, member, std::move(instance)});
    }

    void tick(int64_t ms) {
        clk.advance(time_ms(ms));
        coord->poll();
    }

    group_state state() const {
        const group* g = coord->find_group(group_id);
        return g ? g->state() : group_state::dead;
    }
    int32_t generation() const { return coord->find_group(group_id)->generation(); }

    // Drives one member to Stable as the group's only member; returns its member id.
    std::string stable_single_member() {
        auto j = join_new();
        EXPECT_TRUE(j.done());
        auto s =
            sync(j.get().member_id, j.get().generation_id, {{j.get().member_id, bytes{1, 2, 3}}});
        EXPECT_TRUE(s.done());
        EXPECT_FALSE(s.get().error);
        return j.get().member_id;
    }

    std::string group_id = "g1";
    coordinator_config cfg;
    manual_clock clk;
    memory_log log;
    group_listener* listener = nullptr;  // set before make()
    std::unique_ptr<group_coordinator> coord;
};

}  // namespace spool::broker::coordinator::testing
