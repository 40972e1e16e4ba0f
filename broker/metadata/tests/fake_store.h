#pragma once

// A metadata::store whose snapshots a test sets, for unit tests only. It stands in for the etcd
// store: what the handlers, the coordinator and replica_sync do in a cluster (other brokers'
// leaders and endpoints, offline replicas, fencing, topics created or deleted elsewhere) depends
// on nothing but the snapshots a store hands out and its change notifications, and a real
// cluster store needs an etcd process, a controller and several brokers to produce each of those
// states on purpose (tests/cluster runs that whole system). Here a test writes the state it needs
// in one line and every change is announced to the listeners as a store would.
//
// Its mutations behave like a cluster store's, minus persistence: create_topic places the
// partitions round robin over the live brokers (leader epoch 0, one replica each, as the
// controller does for RF 1); a test may make the next mutation fail (fail_next) to see how
// handlers map store errors.
//
// Threading: any thread; one mutex guards the state (tests are not a hot path). Listeners run on
// the thread that made the change, after it is visible.

#include "broker/metadata/controller/plan/isr_update_check.h"
#include "broker/metadata/errc.h"
#include "broker/metadata/store.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace spool::broker::metadata::testing {

class fake_store final : public store {
public:
    fake_store() {
        auto s = std::make_shared<cluster_state>();
        s->cluster_id = "fake-cluster-id-000000";
        s->version = 1;
        _state = s;
    }

    // Replaces the whole state (its version is bumped past the current one) and notifies.
    void set(cluster_state next) {
        std::unique_lock lock(_mutex);
        next.version = _state->version + 1;
        publish(std::move(lock), std::make_shared<cluster_state>(std::move(next)));
    }
    // The current state, to edit and set() again.
    cluster_state copy() const { return *snapshot(); }

    void set_may_lead(bool v) { _may_lead = v; }
    void set_unready_reason(std::optional<std::string> r) {
        std::lock_guard lock(_mutex);
        _unready = std::move(r);
    }
    // The next mutation fails with e and changes nothing.
    void fail_next(errc e) {
        std::lock_guard lock(_mutex);
        _fail_next = e;
    }

    // What the last create_topic asked for (placement here is always one replica).
    std::atomic<int16_t> last_replication_factor{0};

    cluster_snapshot snapshot() const override {
        std::lock_guard lock(_mutex);
        return _state;
    }
    bool may_lead() const override { return _may_lead; }
    std::optional<std::string> unready_reason() const override {
        std::lock_guard lock(_mutex);
        return _unready;
    }

    op<topic_metadata> create_topic(new_topic t) override {
        co_return mutate<topic_metadata>([&](cluster_state& next) -> result<topic_metadata> {
            if (next.find(t.name) != nullptr) {
                return errc::topic_exists;
            }
            last_replication_factor = t.replication_factor;
            topic_metadata md;
            md.name = t.name;
            md.id = protocol::uuid::random();
            md.configs = t.configs;
            md.replication_factor = t.replication_factor;
            grow(next, md, t.partitions);
            next.topic_names.emplace(md.id, md.name);
            next.topics.emplace(md.name, md);
            return md;
        });
    }

    op<void> delete_topic(std::string name) override {
        co_return done(mutate<int>([&](cluster_state& next) -> result<int> {
            auto it = next.topics.find(name);
            if (it == next.topics.end()) {
                return errc::unknown_topic;
            }
            next.topic_names.erase(it->second.id);
            next.topics.erase(it);
            return 0;
        }));
    }

    op<topic_metadata> create_partitions(std::string name, int32_t total) override {
        co_return mutate<topic_metadata>([&](cluster_state& next) -> result<topic_metadata> {
            auto it = next.topics.find(name);
            if (it == next.topics.end()) {
                return errc::unknown_topic;
            }
            grow(next, it->second, total);
            return it->second;
        });
    }

    op<void> set_topic_configs(std::string name, config::topic_overrides c) override {
        co_return done(mutate<int>([&](cluster_state& next) -> result<int> {
            auto it = next.topics.find(name);
            if (it == next.topics.end()) {
                return errc::unknown_topic;
            }
            it->second.configs = c;
            return 0;
        }));
    }

    op<void> write_features(finalized_features current, finalized_features next) override {
        co_return done(mutate<int>([&](cluster_state& s) -> result<int> {
            if (!(s.features == current)) {
                return errc::stale_features;
            }
            s.features = next;
            return 0;
        }));
    }
    op<void> set_broker_configs(std::string entity, std::map<std::string, std::string> c) override {
        co_return done(mutate<int>([&](cluster_state& next) -> result<int> {
            if (c.empty()) {
                next.broker_configs.erase(entity);
            } else {
                next.broker_configs[entity] = c;
            }
            return 0;
        }));
    }

    op<void> create_acls(std::vector<security::acl_binding> bindings) override {
        co_return done(mutate<int>([&](cluster_state& next) -> result<int> {
            next.acls = security::with_bindings(next.acls, bindings);
            return 0;
        }));
    }
    op<void> delete_acls(std::vector<security::acl_binding> bindings) override {
        co_return done(mutate<int>([&](cluster_state& next) -> result<int> {
            next.acls = security::without_bindings(next.acls, bindings);
            return 0;
        }));
    }
    op<void> set_group_configs(std::string group, std::map<std::string, std::string> c) override {
        co_return done(mutate<int>([&](cluster_state& next) -> result<int> {
            if (c.empty()) {
                next.group_configs.erase(group);
            } else {
                next.group_configs[group] = c;
            }
            return 0;
        }));
    }
    op<void> set_user_scram_credentials(std::string user,
                                        std::map<std::string, std::string> c) override {
        co_return done(mutate<int>([&](cluster_state& next) -> result<int> {
            if (c.empty()) {
                next.user_scram.erase(user);
            } else {
                next.user_scram[user] = c;
            }
            return 0;
        }));
    }

    op<producer_id_block> allocate_producer_ids(int32_t count) override {
        co_return mutate<producer_id_block>([&](cluster_state& next) -> result<producer_id_block> {
            producer_id_block block{next.next_producer_id, count};
            next.next_producer_id += count;
            return block;
        });
    }

    // As a cluster store checks it (isr_update_check.h), the partition's leader as the caller.
    op<partition_state> alter_isr(isr_update u) override {
        co_return mutate<partition_state>([&](cluster_state& next) -> result<partition_state> {
            const auto* t = next.find(u.topic);
            if (t == nullptr || !t->has_partition(u.partition)) {
                return errc::unknown_topic;
            }
            const auto index = static_cast<size_t>(u.partition);
            SPOOL_TRY(checked, check_isr_update(next, t->partitions[index].leader, u));
            auto& p = next.topics.find(u.topic)->second.partitions[index];
            p = std::move(checked.next);
            return p;
        });
    }

private:
    std::optional<errc> take_failure() { return std::exchange(_fail_next, std::nullopt); }

    // One mutation: fails as fail_next() asked, or edits a copy of the state that becomes the
    // next version and is announced; an edit that fails changes nothing.
    template <class T, class Edit>
    result<T> mutate(Edit edit) {
        std::unique_lock lock(_mutex);
        if (auto e = take_failure()) {
            return *e;
        }
        cluster_state next = *_state;
        auto r = edit(next);
        if (!r) {
            return r;
        }
        next.version = _state->version + 1;
        publish(std::move(lock), std::make_shared<cluster_state>(std::move(next)));
        return r;
    }
    static result<void> done(const result<int>& r) {
        if (!r) {
            return r.error();
        }
        return success();
    }

    // Places partitions [size, total) round robin over the live brokers (node 0 without any).
    static void grow(const cluster_state& s, topic_metadata& md, int32_t total) {
        std::vector<int32_t> live;
        for (const auto& [id, b] : s.brokers) {
            live.push_back(id);
        }
        if (live.empty()) {
            live.push_back(0);
        }
        for (auto p = static_cast<int32_t>(md.partitions.size()); p < total; ++p) {
            int32_t leader = live[static_cast<size_t>(p) % live.size()];
            md.partitions.push_back(partition_state{p, leader, 0, 0, {leader}, {leader}});
        }
    }

    // Makes next the state, then tells the listeners outside the lock.
    void publish(std::unique_lock<std::mutex> lock, cluster_snapshot next) {
        cluster_snapshot before = std::exchange(_state, next);
        lock.unlock();
        notify_listeners(before, next);
    }

    mutable std::mutex _mutex;
    cluster_snapshot _state;
    std::atomic<bool> _may_lead{true};
    std::optional<std::string> _unready;
    std::optional<errc> _fail_next;
};

// A live broker with one PLAINTEXT endpoint at host:port.
inline broker_registration broker(int32_t id, std::string host, int32_t port,
                                  std::optional<std::string> rack = std::nullopt) {
    broker_registration b;
    b.node_id = id;
    b.incarnation_id = "incarnation-" + std::to_string(id);
    b.log_dir_id = "dir-" + std::to_string(id);
    b.rack = std::move(rack);
    b.endpoints = {{"PLAINTEXT", std::move(host), port, "PLAINTEXT"}};
    return b;
}

// A topic whose partition p is led by leaders[p] (replicas and ISR: that broker alone, or
// none for -1 with `replicas` given explicitly by the caller afterwards).
inline topic_metadata topic(std::string name, const std::vector<int32_t>& leaders,
                            protocol::uuid id = protocol::uuid::random()) {
    topic_metadata t;
    t.name = std::move(name);
    t.id = id;
    for (size_t p = 0; p < leaders.size(); ++p) {
        int32_t l = leaders[p];
        t.partitions.push_back(
            partition_state{static_cast<int32_t>(p), l, 0, 0,
                            l >= 0 ? std::vector<int32_t>{l} : std::vector<int32_t>{},
                            l >= 0 ? std::vector<int32_t>{l} : std::vector<int32_t>{}});
    }
    return t;
}

inline void add(cluster_state& s, topic_metadata t) {
    s.topic_names[t.id] = t.name;
    s.topics[t.name] = std::move(t);
}

}  // namespace spool::broker::metadata::testing
