#pragma once

// Fakes of the broker side for reconciler unit tests (no broker runs in a unit test):
//
// fixed_health: the HTTP admin API. restart-safe answers `safe`; the decommission endpoints keep
// one drain_progress per broker id in `drains` (the test moves it along), answer 409 for ids in
// `undrainable`, 404 for ids neither in `drains` nor `known`, and record every call as
// "POST 4" / "GET 4" / "DELETE 4"; with `unreachable`, DELETE fails as without a network.
//
// fixed_admins: every admin_client it connects shares one kafka_state: `placement` for
// Metadata, `ongoing` for ListPartitionReassignments (AlterPartitionReassignments appends its
// moves there and to `submitted`; the test clears `ongoing` to finish them), and a count of
// ElectLeaders calls. `refuse_reassignment` makes AlterPartitionReassignments fail.
// cluster_object: a Cluster to put into the fake API server; secret_value: a Secret's decoded
// value there.

#include "operator/api/json.h"
#include "operator/kube/config.h"
#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/admin_client.h"
#include "operator/reconcilers/broker_health.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace spool::op::reconcilers::testing {

// spec.security of a plaintext Cluster (the default is TLS and SCRAM): what tests of other
// steps use, so that they need no certificates.
inline json plaintext_security() {
    return obj({{"listeners", obj({{"internal", obj({{"tls", boolean(false)},
                                                     {"authentication", str("none")}})}})}});
}

// The decoded value of `key` in the Secret ns/name; empty when either is missing.
inline std::string secret_value(kube::testing::fake_client& api, const std::string& ns,
                                const std::string& name, const std::string& key) {
    auto s = api.object(kube::kinds::secret, ns, name);
    const json* data = s ? find(*s, "data") : nullptr;
    if (!data || !data->has_field(key)) {
        return {};
    }
    auto decoded = kube::base64_decode(data->at(key).as_string());
    return decoded ? decoded.value() : std::string();
}

// The Cluster "demo" in namespace "ns" with `replicas` brokers on an external etcd, plaintext.
inline json cluster_object(int replicas) {
    return obj(
        {{"apiVersion", str("spool.dev/v1alpha1")},
         {"kind", str("Cluster")},
         {"metadata", obj({{"name", str("demo")}, {"namespace", str("ns")}})},
         {"spec", obj({{"replicas", num(replicas)},
                       {"security", plaintext_security()},
                       {"metadataStore",
                        obj({{"etcd", obj({{"endpoints", arr({str("http://etcd:2379")})}})}})}})}});
}

// What the StatefulSet controller would have written once `replicas` pods run `revision`: the
// status of the StatefulSet "demo" in namespace "ns", at its current generation.
inline void statefulset_at(kube::testing::fake_client& api, int replicas,
                           const std::string& revision) {
    json sts = api.object(kube::kinds::statefulset, "ns", "demo").value();
    sts["status"] = obj({{"replicas", num(replicas)},
                         {"readyReplicas", num(replicas)},
                         {"observedGeneration", num(get_int(sts.at("metadata"), "generation"))},
                         {"updateRevision", str(revision)},
                         {"currentRevision", str(revision)}});
    (void)api.put(kube::kinds::statefulset, sts);
}

// The pods removed (restarted) since the last clear_writes(), in order.
inline std::vector<std::string> removed_pods(kube::testing::fake_client& api) {
    std::vector<std::string> names;
    for (const auto& w : api.writes())
        if (w.verb == "remove" && w.kind == "Pod")
            names.push_back(w.name);
    return names;
}

class fixed_health : public broker_health {
public:
    result<restart_verdict> restart_safe(const std::string&, int, int broker_id,
                                         const client_tls*) override {
        asked.push_back(broker_id);
        return restart_verdict{safe, safe ? "safe: test" : "not safe: test"};
    }
    result<drain_progress> start_decommission(const std::string&, int, int id,
                                              const client_tls*) override {
        calls.push_back(fmt::format("POST {}", id));
        if (undrainable.count(id)) {
            return error{409, "NoReplacement",
                         fmt::format("cannot decommission broker {}: orders-0 has no other "
                                     "eligible broker",
                                     id),
                         false};
        }
        if (!drains.count(id) && !known.count(id)) {
            return error{404, "BrokersUnreachable", "no such broker", true};
        }
        auto& p = drains[id];
        if (p.phase == drain_progress::state::none) {
            p = {drain_progress::state::draining, 0, initial_moves, 0};
        }
        p.moving += p.remaining;
        p.remaining = 0;
        return p;
    }
    result<drain_progress> decommission_status(const std::string&, int, int id,
                                              const client_tls*) override {
        calls.push_back(fmt::format("GET {}", id));
        if (!drains.count(id)) {
            if (known.count(id))
                return drain_progress{};
            return error{404, "BrokersUnreachable", "no such broker", true};
        }
        return drains[id];
    }
    result<drain_progress> cancel_decommission(const std::string&, int, int id,
                                              const client_tls*) override {
        calls.push_back(fmt::format("DELETE {}", id));
        if (unreachable) {
            return make_error("BrokersUnreachable", "connect: connection refused");
        }
        drains.erase(id);
        return drain_progress{};
    }
    // Finishes broker `id`'s drain.
    void drain(int id) { drains[id] = {drain_progress::state::drained, 0, 0, initial_moves}; }

    bool safe = true;
    bool unreachable = false;  // cancel_decommission fails as a dead admin API does
    std::vector<int> asked;
    std::map<int, drain_progress> drains;
    std::set<int> known, undrainable;
    int32_t initial_moves = 7;
    std::vector<std::string> calls;
};

struct kafka_state {
    cluster_placement placement;
    std::vector<partition_move> ongoing, submitted;
    std::vector<replica_count> replica_counts;  // each alter_reassignments call's
    bool refuse_reassignment = false;
    int elections = 0;
};

class fixed_admin : public admin_client {
public:
    explicit fixed_admin(kafka_state& s) : _s(s) {}
    result<std::optional<topic_description>> describe_topic(const std::string&) override {
        return std::optional<topic_description>{};
    }
    result<topic_description> create_topic(
        const std::string&, int32_t, int32_t,
        const std::vector<std::pair<std::string, std::string>>&) override {
        return topic_description{};
    }
    result<void> create_partitions(const std::string&, int32_t) override { return ok(); }
    result<void> alter_configs(const std::string&, const std::vector<config_change>&) override {
        return ok();
    }
    result<void> delete_topic(const std::string&) override { return ok(); }
    result<topic_configs> describe_topic_configs(const std::string&) override {
        return topic_configs{};
    }
    result<cluster_placement> describe_placement() override { return _s.placement; }
    result<void> alter_reassignments(const std::vector<partition_move>& moves,
                                     replica_count count) override {
        _s.replica_counts.push_back(count);
        if (_s.refuse_reassignment) {
            return error{0, "AdminError",
                         "reassign orders-0: INVALID_REPLICA_ASSIGNMENT (broker 9 is not "
                         "registered)",
                         false};
        }
        _s.submitted.insert(_s.submitted.end(), moves.begin(), moves.end());
        _s.ongoing.insert(_s.ongoing.end(), moves.begin(), moves.end());
        return ok();
    }
    result<std::vector<partition_move>> list_reassignments() override { return _s.ongoing; }
    result<std::vector<std::string>> elect_preferred_leaders() override {
        ++_s.elections;
        return std::vector<std::string>{};
    }

private:
    kafka_state& _s;
};

class fixed_admins : public admin_client_factory {
public:
    result<std::unique_ptr<admin_client>> connect(const std::string&, const client_tls*) override {
        return std::unique_ptr<admin_client>(new fixed_admin(kafka));
    }
    kafka_state kafka;
    cluster_placement& placement = kafka.placement;
};

}  // namespace spool::op::reconcilers::testing
