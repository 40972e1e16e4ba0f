#include "broker/metadata/etcd/etcd_state.h"

#include "common/log.h"

#include <algorithm>

namespace spool::broker::metadata {

using kind = etcd_layout::parsed_key::kind;

namespace {

void log_undecodable(std::string_view key, int64_t revision) {
    log::get("metadata")
        ->warn("etcd key {} (revision {}) holds a value this broker cannot decode; ignored", key,
               revision);
}

// A {"k":"v"} value (etcd_layout::encode_broker_configs) into entry `name` of `m`: an empty map
// or one that does not decode removes the entry.
void put_string_map(std::map<std::string, std::map<std::string, std::string>>& m,
                    const std::string& name, const etcd::key_value& kv) {
    auto r = etcd_layout::decode_broker_configs(kv.value);
    if (!r || r.value().empty()) {
        if (!r) {
            log_undecodable(kv.key, kv.mod_revision);
        }
        m.erase(name);
        return;
    }
    m[name] = std::move(r).value();
}

}  // namespace

void etcd_state::reset(const std::vector<etcd::key_value>& kvs, int64_t revision) {
    _state = cluster_state{};
    _topics.clear();
    _partitions.clear();
    _dirty.clear();
    _shutdown_marks.clear();
    _acls.clear();
    _acls_dirty = true;
    for (const auto& kv : kvs) {
        apply_put(kv);
    }
    // Every topic is new: build() folds each once.
    for (const auto& [name, t] : _topics) {
        _dirty.insert(name);
    }
    _state.version = revision;
}

void etcd_state::apply(const std::vector<etcd::watch_event>& events) {
    for (const auto& e : events) {
        if (e.type == etcd::watch_event::kind::put) {
            apply_put(e.kv);
        } else {
            apply_delete(e.kv.key, e.kv.mod_revision);
        }
    }
}

void etcd_state::note_revision(int64_t revision) {
    _state.version = std::max(_state.version, revision);
}

void etcd_state::apply_put(const etcd::key_value& kv) {
    note_revision(kv.mod_revision);
    auto key = etcd_layout::parse(_keys, kv.key);
    switch (key.what) {
        case kind::cluster_id:
            if (auto id = etcd_layout::decode_cluster_id(kv.value)) {
                _state.cluster_id = std::move(id).value();
            } else {
                log_undecodable(kv.key, kv.mod_revision);
            }
            return;
        case kind::broker: {
            auto r = etcd_layout::decode_broker(kv.value);
            if (!r || r.value().node_id != key.number) {
                log_undecodable(kv.key, kv.mod_revision);
                _state.brokers.erase(key.number);
                return;
            }
            auto& b = _state.brokers[key.number];
            b = std::move(r).value();
            b.record_revision = kv.mod_revision;
            b.lease = kv.lease;
            return;
        }
        case kind::controller: {
            auto r = etcd_layout::decode_controller(kv.value);
            if (!r) {
                log_undecodable(kv.key, kv.mod_revision);
            }
            _state.controller_id = r ? r.value().node_id : -1;
            return;
        }
        case kind::topic: {
            auto r = etcd_layout::decode_topic(kv.value);
            _dirty.insert(key.name);
            if (!r) {
                log_undecodable(kv.key, kv.mod_revision);
                _topics.erase(key.name);
                return;
            }
            _topics[key.name] = topic_entry{std::move(r).value(), kv.mod_revision};
            return;
        }
        case kind::partition: {
            auto r = etcd_layout::decode_partition(kv.value);
            _dirty.insert(key.name);
            auto& parts = _partitions[key.name];
            if (!r) {
                log_undecodable(kv.key, kv.mod_revision);
                parts.erase(key.number);
                return;
            }
            parts[key.number] = to_state(key.number, r.value(), kv.mod_revision);
            return;
        }
        case kind::broker_config: {
            auto r = etcd_layout::decode_broker_configs(kv.value);
            if (!r) {
                log_undecodable(kv.key, kv.mod_revision);
                _state.broker_configs.erase(key.name);
                return;
            }
            if (r.value().empty()) {
                _state.broker_configs.erase(key.name);
            } else {
                _state.broker_configs[key.name] = std::move(r).value();
            }
            return;
        }
        case kind::user_scram:
            put_string_map(_state.user_scram, key.name, kv);
            return;
        case kind::group_config:
            put_string_map(_state.group_configs, key.name, kv);
            return;
        case kind::producer_ids:
            if (auto next = etcd_layout::decode_producer_id(kv.value)) {
                _state.next_producer_id = next.value();
            } else {
                log_undecodable(kv.key, kv.mod_revision);
            }
            return;
        case kind::shutdown:
            if (auto r = etcd_layout::decode_shutdown(kv.value)) {
                _shutdown_marks[key.number] = std::move(r).value().incarnation_id;
            } else {
                log_undecodable(kv.key, kv.mod_revision);
                _shutdown_marks.erase(key.number);
            }
            return;
        case kind::election:
            if (auto r = etcd_layout::decode_election(kv.value)) {
                _state.elections[key.name] = std::move(r).value();
            } else {
                log_undecodable(kv.key, kv.mod_revision);
                _state.elections.erase(key.name);
            }
            return;
        case kind::decommission:
            if (auto r = etcd_layout::decode_decommission(kv.value)) {
                _state.decommissioning[key.number] = std::move(r).value().partitions;
            } else {
                log_undecodable(kv.key, kv.mod_revision);
                _state.decommissioning.erase(key.number);
            }
            return;
        case kind::acl: {
            auto r = etcd_layout::decode_acl(kv.value);
            _acls_dirty = true;
            if (!r || _keys.acl(r.value()) != kv.key) {
                log_undecodable(kv.key, kv.mod_revision);
                _acls.erase(key.name);
                return;
            }
            _acls[key.name] = std::move(r).value();
            return;
        }
        case kind::features:
            if (auto f = etcd_layout::decode_features(kv.value)) {
                _state.features = f.value();
                _state.features.record_revision = kv.mod_revision;
            } else {
                // Not a level this broker can judge: unsupported_reason() refuses it.
                log_undecodable(kv.key, kv.mod_revision);
                _state.features = finalized_features{};
                _state.features.metadata_version = -1;
                _state.features.epoch = 1;
                _state.features.record_revision = kv.mod_revision;
            }
            return;
        case kind::supported_features:
            if (auto f = etcd_layout::decode_broker_features(kv.value)) {
                _state.broker_support[key.number] = std::move(f).value();
            } else {
                log_undecodable(kv.key, kv.mod_revision);
                _state.broker_support.erase(key.number);
            }
            return;
        case kind::unknown:
            // Another version's key, or a foreign one under our prefix: not ours to interpret.
            return;
    }
}

void etcd_state::apply_delete(std::string_view key_text, int64_t revision) {
    note_revision(revision);
    auto key = etcd_layout::parse(_keys, key_text);
    switch (key.what) {
        case kind::broker:
            _state.brokers.erase(key.number);
            return;
        case kind::controller:
            _state.controller_id = -1;
            return;
        case kind::topic:
            _topics.erase(key.name);
            _dirty.insert(key.name);
            return;
        case kind::partition:
            if (auto it = _partitions.find(key.name); it != _partitions.end()) {
                it->second.erase(key.number);
                if (it->second.empty()) {
                    _partitions.erase(it);
                }
            }
            _dirty.insert(key.name);
            return;
        case kind::broker_config:
            _state.broker_configs.erase(key.name);
            return;
        case kind::shutdown:
            _shutdown_marks.erase(key.number);
            return;
        case kind::election:
            _state.elections.erase(key.name);
            return;
        case kind::decommission:
            _state.decommissioning.erase(key.number);
            return;
        case kind::acl:
            _acls_dirty = _acls.erase(key.name) > 0 || _acls_dirty;
            return;
        case kind::user_scram:
            _state.user_scram.erase(key.name);
            return;
        case kind::group_config:
            _state.group_configs.erase(key.name);
            return;
        case kind::supported_features:
            _state.broker_support.erase(key.number);
            return;
        case kind::features:  // never deleted by a broker: a downgrade below 33 is refused
        case kind::cluster_id:    // never deleted by a broker; keep the id we know
        case kind::producer_ids:  // likewise: ids already handed out stay handed out
        case kind::unknown:
            return;
    }
}

void etcd_state::rebuild_topic(const std::string& name) {
    auto old = _state.topics.find(name);
    if (old != _state.topics.end()) {
        auto id_it = _state.topic_names.find(old->second.id);
        if (id_it != _state.topic_names.end() && id_it->second == name) {
            _state.topic_names.erase(id_it);
        }
        _state.topics.erase(old);
    }
    auto rec = _topics.find(name);
    if (rec == _topics.end()) {
        return;
    }
    topic_metadata md;
    md.name = name;
    md.id = rec->second.record.id;
    md.configs = rec->second.record.configs;
    md.record_revision = rec->second.mod_revision;
    const int32_t count = rec->second.record.partitions;
    md.partitions.reserve(static_cast<size_t>(count));
    auto parts = _partitions.find(name);
    for (int32_t p = 0; p < count; ++p) {
        const partition_state* placed = nullptr;
        if (parts != _partitions.end()) {
            if (auto it = parts->second.find(p); it != parts->second.end()) {
                placed = &it->second;
            }
        }
        if (placed != nullptr) {
            md.partitions.push_back(*placed);
        } else {
            partition_state unplaced;
            unplaced.partition = p;
            md.partitions.push_back(std::move(unplaced));
        }
    }
    md.replication_factor = rec->second.record.replication_factor;
    if (md.replication_factor == 0) {
        // A record from before replication_factor was kept: the placed replicas tell it.
        auto first = std::find_if(md.partitions.begin(), md.partitions.end(),
                                  [](const partition_state& p) { return p.placed(); });
        md.replication_factor =
            first == md.partitions.end() ? 1 : static_cast<int16_t>(first->replicas.size());
    }
    _state.topic_names[md.id] = name;
    _state.topics.emplace(name, std::move(md));
}

cluster_snapshot etcd_state::build() {
    for (const auto& name : _dirty) {
        rebuild_topic(name);
    }
    _dirty.clear();
    if (_acls_dirty) {
        std::vector<security::acl_binding> bindings;
        bindings.reserve(_acls.size());
        for (const auto& [key, b] : _acls) {
            bindings.push_back(b);
        }
        _state.acls = std::make_shared<const security::acl_index>(std::move(bindings));
        _acls_dirty = false;
    }
    _state.shutting_down.clear();
    for (const auto& [node, incarnation] : _shutdown_marks) {
        auto b = _state.brokers.find(node);
        if (b != _state.brokers.end() && b->second.incarnation_id == incarnation) {
            _state.shutting_down.insert(node);
        }
    }
    return std::make_shared<const cluster_state>(_state);
}

}  // namespace spool::broker::metadata
