#pragma once

// The etcd store's view of its keys (etcd_layout.h), turned into cluster_state snapshots: a full
// load (reset) and then watch events, applied in revision order, each batch ending in a new
// immutable snapshot (build).
//
// The records are kept as etcd has them (a topic record and, separately, the records of the
// partitions placed so far) and folded into a cluster_state per topic: only the topics a batch
// touched are rebuilt, then the state is copied once into the new snapshot. A partition whose
// record is missing (not placed yet) is {p, leader -1, replicas {}}; partition records beyond a
// topic's partition count (written for a count not seen yet) wait until the count covers them.
//
// A value that does not decode (etcd_layout's strict codecs) is logged and treated as absent, so
// one corrupt key never stops a broker from following the rest of the cluster.
//
// Threading: none; owned by the etcd store's thread.

#include "broker/etcd/client.h"
#include "broker/metadata/cluster_state.h"
#include "broker/metadata/etcd/etcd_layout.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace spool::broker::metadata {

class etcd_state {
public:
    explicit etcd_state(etcd_layout::keys keys) : _keys(std::move(keys)) {}

    // Forgets everything and loads kvs, read at `revision` (a get_prefix of keys.all()).
    void reset(const std::vector<etcd::key_value>& kvs, int64_t revision);
    // Applies one watch batch's events, in order.
    void apply(const std::vector<etcd::watch_event>& events);
    void apply_put(const etcd::key_value& kv);
    void apply_delete(std::string_view key, int64_t revision);

    // A new immutable snapshot of everything applied so far; version = the revision of the
    // last applied change.
    cluster_snapshot build();

    int64_t revision() const { return _state.version; }
    const etcd_layout::keys& keys() const { return _keys; }

private:
    struct topic_entry {
        topic_record record;
        int64_t mod_revision = 0;
    };
    void note_revision(int64_t revision);
    void rebuild_topic(const std::string& name);

    etcd_layout::keys _keys;
    // The state being maintained; its topics are stale for the names in _dirty until build().
    cluster_state _state;
    std::map<std::string, topic_entry, std::less<>> _topics;
    std::map<std::string, std::map<int32_t, partition_state>, std::less<>> _partitions;
    std::set<std::string, std::less<>> _dirty;
    // P/shutdown/<id> marks: node id -> the incarnation that set it (folded into
    // cluster_state::shutting_down by build(), for the incarnation registered now).
    std::map<int32_t, std::string> _shutdown_marks;
    // P/acls/<hex> -> its binding; build() makes a new index only after one changed.
    std::map<std::string, security::acl_binding, std::less<>> _acls;
    bool _acls_dirty = false;
};

}  // namespace spool::broker::metadata
