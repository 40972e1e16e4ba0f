#include "broker/metadata/etcd/controller_txn.h"

#include <set>
#include <string>

namespace spool::broker::metadata {

std::vector<controller_txn> controller_txns(const etcd_layout::keys& keys, int64_t epoch,
                                            const std::vector<partition_write>& writes,
                                            size_t max_ops) {
    std::vector<controller_txn> out;
    std::set<std::string> topics_compared;  // of the txn being filled
    for (size_t i = 0; i < writes.size(); ++i) {
        const auto& w = writes[i];
        const bool compare_topic = w.topic_revision != 0 && !topics_compared.contains(w.topic);
        const size_t compares_needed = 1 + (compare_topic ? 1 : 0);
        if (out.empty() || out.back().request.success.size() + 1 > max_ops ||
            out.back().request.compares.size() + compares_needed > max_ops) {
            controller_txn t;
            t.first = i;
            t.request.compares.push_back(etcd::compare::created_at(keys.controller(), epoch));
            t.request.failure.push_back(etcd::range_op{keys.controller(), {}, 0});
            out.push_back(std::move(t));
            topics_compared.clear();
        }
        auto& t = out.back();
        if (w.topic_revision != 0 && topics_compared.insert(w.topic).second) {
            t.request.compares.push_back(
                etcd::compare::modified_at(keys.topic(w.topic), w.topic_revision));
        }
        auto key = keys.partition(w.topic, w.state.partition);
        t.request.compares.push_back(
            w.state.record_revision == 0
                ? etcd::compare::absent(key)
                : etcd::compare::modified_at(key, w.state.record_revision));
        t.request.success.push_back(
            etcd::put_op{std::move(key), etcd_layout::encode(to_record(w.state)), 0});
        ++t.count;
    }
    return out;
}

controller_txn unfence_txn(const etcd_layout::keys& keys, int64_t epoch,
                           const broker_registration& b) {
    controller_txn t;
    t.unfences = b.node_id;
    auto key = keys.broker(b.node_id);
    t.request.compares.push_back(etcd::compare::created_at(keys.controller(), epoch));
    t.request.compares.push_back(etcd::compare::modified_at(key, b.record_revision));
    t.request.success.push_back(etcd::put_op{key, etcd_layout::encode(b), b.lease});
    t.request.failure.push_back(etcd::range_op{keys.controller(), {}, 0});
    return t;
}

etcd::txn_request campaign_txn(const etcd_layout::keys& keys,
                               const etcd_layout::controller_record& me, int64_t lease) {
    etcd::txn_request r;
    r.compares.push_back(etcd::compare::absent(keys.controller()));
    r.success.push_back(etcd::put_op{keys.controller(), etcd_layout::encode(me), lease});
    r.failure.push_back(etcd::range_op{keys.controller(), {}, 0});
    return r;
}

etcd::txn_request resign_txn(const etcd_layout::keys& keys, int64_t epoch) {
    etcd::txn_request r;
    r.compares.push_back(etcd::compare::created_at(keys.controller(), epoch));
    r.success.push_back(etcd::delete_op{keys.controller(), {}});
    return r;
}

std::vector<controller_txn> election_cleanup_txns(const etcd_layout::keys& keys, int64_t epoch,
                                                  const std::vector<std::string>& ids,
                                                  size_t max_ops) {
    std::vector<controller_txn> out;
    for (const auto& id : ids) {
        if (out.empty() || out.back().request.success.size() >= max_ops) {
            controller_txn t;
            t.request.compares.push_back(etcd::compare::created_at(keys.controller(), epoch));
            t.request.failure.push_back(etcd::range_op{keys.controller(), {}, 0});
            out.push_back(std::move(t));
        }
        out.back().request.success.push_back(etcd::delete_op{keys.election(id), {}});
    }
    return out;
}

}  // namespace spool::broker::metadata
