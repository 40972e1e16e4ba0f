#pragma once

// An in-memory Kafka cluster behind the admin_client interface, for Topic reconciler unit tests:
// topics with a partition count, replication factor and per-topic config overrides, and a count
// of every write (CreateTopics, CreatePartitions, IncrementalAlterConfigs, DeleteTopics) so a
// test can assert that a pass changed nothing. Placement: every topic's partition p has the
// replication factor's brokers from p on, round-robin over `brokers` (leader first), unless
// `replicas` says otherwise; AlterPartitionReassignments queues its moves in `reassigning`
// until the test calls finish_reassignments(). Not modelled: broker defaults (a config without
// an override is reported absent), errors other than the injected connect failure.
// For the User reconciler: SCRAM credentials per user (mechanism -> salted password, salt) and
// a set of ACL bindings, with their writes counted the same way.

#include "operator/reconcilers/admin_client.h"

#include <map>
#include <optional>
#include <set>
#include <memory>
#include <string>
#include <vector>

namespace spool::op::reconcilers::testing {

struct fake_topic {
    topic_description desc;
    std::map<std::string, std::string> overrides;
    std::map<int32_t, std::vector<int32_t>> replicas;  // partition -> replicas, when moved
};

class fake_kafka : public admin_client_factory {
public:
    std::map<std::string, fake_topic> topics;
    // Writes in order, "verb topic" (create_topic orders, alter_configs orders, ...).
    std::vector<std::string> writes;
    std::vector<std::vector<config_change>> alterations;
    int reads = 0;
    std::vector<int32_t> brokers{0, 1, 2};
    std::vector<partition_move> reassigning;
    std::vector<replica_count> replica_counts;  // each alter_reassignments call's

    // The replicas of `topic`'s partition `p` as describe_placement reports them.
    std::vector<int32_t> replicas_of(const std::string& topic, int32_t p) const {
        const auto& t = topics.at(topic);
        if (auto it = t.replicas.find(p); it != t.replicas.end()) {
            return it->second;
        }
        std::vector<int32_t> out;
        for (int32_t i = 0; i < t.desc.replication_factor && !brokers.empty(); ++i) {
            out.push_back(brokers[(p + i) % brokers.size()]);
        }
        return out;
    }
    // Every queued move completes; a topic's replication factor is then its partition 0's.
    void finish_reassignments() {
        for (const auto& m : reassigning) {
            auto& t = topics.at(m.topic);
            t.replicas[m.partition] = m.replicas;
            t.desc.replication_factor = static_cast<int32_t>(replicas_of(m.topic, 0).size());
        }
        reassigning.clear();
    }
    // user -> mechanism -> the credential as upserted
    std::map<std::string, std::map<int8_t, scram_upsert>> scram;
    std::set<acl_binding> acls;
    bool authorizer = true;  // false: DescribeAcls answers as Kafka's SECURITY_DISABLED
    // The last connection's address and TLS identity (nullopt: plaintext).
    std::string last_bootstrap;
    std::optional<client_tls> last_tls;

    result<std::unique_ptr<admin_client>> connect(const std::string&, const client_tls*) override;
};

namespace detail {

class fake_admin : public admin_client {
public:
    explicit fake_admin(fake_kafka& kafka) : _kafka(kafka) {}

    result<std::optional<topic_description>> describe_topic(const std::string& name) override {
        ++_kafka.reads;
        auto it = _kafka.topics.find(name);
        if (it == _kafka.topics.end()) {
            return std::optional<topic_description>{};
        }
        return std::optional(it->second.desc);
    }
    result<topic_description> create_topic(
        const std::string& name, int32_t partitions, int32_t replication_factor,
        const std::vector<std::pair<std::string, std::string>>& configs) override {
        _kafka.writes.push_back("create_topic " + name);
        fake_topic t;
        t.desc = {"id-" + name, partitions, replication_factor};
        for (const auto& [k, v] : configs) {
            t.overrides[k] = v;
        }
        _kafka.topics[name] = t;
        return t.desc;
    }
    result<void> create_partitions(const std::string& name, int32_t total) override {
        _kafka.writes.push_back("create_partitions " + name);
        _kafka.topics.at(name).desc.partitions = total;
        return ok();
    }
    result<void> alter_configs(const std::string& name,
                               const std::vector<config_change>& changes) override {
        _kafka.writes.push_back("alter_configs " + name);
        _kafka.alterations.push_back(changes);
        auto& t = _kafka.topics.at(name);
        for (const auto& c : changes) {
            if (c.operation == config_change::op::set) {
                t.overrides[c.key] = c.value;
            } else {
                t.overrides.erase(c.key);
            }
        }
        return ok();
    }
    result<void> delete_topic(const std::string& name) override {
        _kafka.writes.push_back("delete_topic " + name);
        _kafka.topics.erase(name);
        return ok();
    }
    result<topic_configs> describe_topic_configs(const std::string& name) override {
        ++_kafka.reads;
        topic_configs out;
        for (const auto& [k, v] : _kafka.topics.at(name).overrides) {
            out[k] = {v, true};
        }
        return out;
    }
    result<cluster_placement> describe_placement() override {
        ++_kafka.reads;
        cluster_placement out{_kafka.brokers, {}};
        for (const auto& [name, t] : _kafka.topics) {
            for (int32_t p = 0; p < t.desc.partitions; ++p) {
                auto replicas = _kafka.replicas_of(name, p);
                out.partitions.push_back(
                    {name, p, replicas.empty() ? -1 : replicas.front(), replicas});
            }
        }
        return out;
    }
    result<void> alter_reassignments(const std::vector<partition_move>& moves,
                                     replica_count count) override {
        _kafka.writes.push_back("alter_reassignments " + (moves.empty() ? "" : moves[0].topic));
        _kafka.replica_counts.push_back(count);
        _kafka.reassigning.insert(_kafka.reassigning.end(), moves.begin(), moves.end());
        return ok();
    }
    result<std::vector<partition_move>> list_reassignments() override {
        ++_kafka.reads;
        return _kafka.reassigning;
    }
    result<std::vector<std::string>> elect_preferred_leaders() override {
        return make_error("Unexpected", "the Topic reconciler does not elect leaders");
    }
    result<std::vector<int8_t>> describe_scram(const std::string& user) override {
        ++_kafka.reads;
        std::vector<int8_t> out;
        for (const auto& [mechanism, c] : _kafka.scram[user]) {
            out.push_back(mechanism);
        }
        return out;
    }
    result<void> upsert_scram(const scram_upsert& c) override {
        _kafka.writes.push_back("upsert_scram " + c.user);
        _kafka.scram[c.user][c.mechanism] = c;
        return ok();
    }
    result<void> delete_scram(const std::string& user, int8_t mechanism) override {
        if (_kafka.scram[user].erase(mechanism)) {
            _kafka.writes.push_back("delete_scram " + user);
        }
        return ok();
    }
    result<std::vector<acl_binding>> describe_acls(const std::string& principal) override {
        ++_kafka.reads;
        if (!_kafka.authorizer) {
            return error{0, acls_unsupported_reason, "describe ACLs: SECURITY_DISABLED", false};
        }
        std::vector<acl_binding> out;
        for (const auto& a : _kafka.acls) {
            if (a.principal == principal) {
                out.push_back(a);
            }
        }
        return out;
    }
    result<void> create_acls(const std::vector<acl_binding>& bindings) override {
        _kafka.writes.push_back("create_acls " + std::to_string(bindings.size()));
        _kafka.acls.insert(bindings.begin(), bindings.end());
        return ok();
    }
    result<void> delete_acls(const std::vector<acl_binding>& bindings) override {
        _kafka.writes.push_back("delete_acls " + std::to_string(bindings.size()));
        for (const auto& b : bindings) {
            _kafka.acls.erase(b);
        }
        return ok();
    }

private:
    fake_kafka& _kafka;
};

}  // namespace detail

inline result<std::unique_ptr<admin_client>> fake_kafka::connect(const std::string& bootstrap,
                                                                  const client_tls* tls) {
    last_bootstrap = bootstrap;
    last_tls = tls != nullptr ? std::optional<client_tls>(*tls) : std::nullopt;
    return std::unique_ptr<admin_client>(new detail::fake_admin(*this));
}

}  // namespace spool::op::reconcilers::testing
