// The etcd store's mutations (etcd_store.h): validation on the caller's thread, the transaction
// and the wait for its revision (and placement) on the store's thread, then the visit of every
// shard back on the caller's.

#include "broker/metadata/errc.h"
#include "broker/metadata/etcd/etcd_store.h"
#include "common/log.h"

#include <algorithm>
#include <limits>

namespace spool::broker::metadata {

namespace asio = boost::asio;

namespace {

bool valid_configs(const config::topic_overrides& c) {
    return std::all_of(c.begin(), c.end(), [](const auto& kv) {
        return config::validate_topic_override(kv.first, kv.second).empty();
    });
}

result<void> as_void(const result<std::monostate>& r) {
    if (!r) {
        return r.error();
    }
    return success();
}

}  // namespace

// ---- shared steps (store thread) ----

asio::awaitable<result<etcd_store::topic_read>> etcd_store::read_topic(const std::string& name) {
    auto got_op = _client->range(_keys.topic(name));
    auto got = co_await std::move(got_op);
    if (!got) {
        co_return failed(got.error());
    }
    note_reachable();
    if (got.value().kvs.empty()) {
        co_return errc::unknown_topic;
    }
    const auto& kv = got.value().kvs.front();
    auto rec = etcd_layout::decode_topic(kv.value);
    if (!rec) {
        log::get("metadata")->error("{} holds an undecodable topic record", kv.key);
        co_return errc::persist_failed;
    }
    co_return topic_read{std::move(rec).value(), kv.mod_revision};
}

asio::awaitable<result<int64_t>> etcd_store::edit_topic(const std::string& name, topic_edit edit,
                                                        clock::time_point deadline,
                                                        protocol::uuid* id) {
    // Compare-and-swap on the record's revision: a concurrent change from another broker makes
    // the compare fail, and the edit is applied again to what it wrote.
    while (!_stopping && clock::now() < deadline) {
        auto read = co_await read_topic(name);
        if (!read) {
            co_return read.error();
        }
        auto rec = read.value().record;
        if (id != nullptr) {
            *id = rec.id;
        }
        if (auto e = edit(rec)) {
            co_return e;
        }
        etcd::txn_request t;
        t.compares.push_back(
            etcd::compare::modified_at(_keys.topic(name), read.value().mod_revision));
        t.success.emplace_back(etcd::put_op{_keys.topic(name), etcd_layout::encode(rec), 0});
        auto done_op = _client->txn(std::move(t));
        auto done = co_await std::move(done_op);
        if (!done) {
            co_return failed(done.error());
        }
        if (done.value().succeeded) {
            co_return done.value().revision;
        }
    }
    co_return errc::timed_out;
}

asio::awaitable<etcd_store::committed<topic_metadata>> etcd_store::wait_placed(
    const std::string& name, protocol::uuid id, int64_t revision, clock::time_point deadline) {
    predicate placed = [name, id, revision](const cluster_state& s) {
        if (s.version < revision) {
            return false;
        }
        const auto* t = s.find(name);
        if (t == nullptr || t->id != id) {
            return true;  // deleted (or replaced) meanwhile: nothing left to wait for
        }
        return std::all_of(t->partitions.begin(), t->partitions.end(),
                           [](const partition_state& p) { return p.placed(); });
    };
    auto wait = wait_until(std::move(placed), deadline);
    auto seen = co_await std::move(wait);
    if (!seen) {
        co_return committed<topic_metadata>{errc::timed_out, nullptr};
    }
    const auto* t = seen->find(name);
    if (t == nullptr || t->id != id) {
        co_return committed<topic_metadata>{errc::unknown_topic, seen};
    }
    co_return committed<topic_metadata>{*t, seen};
}

// ---- topics ----

asio::awaitable<etcd_store::committed<topic_metadata>> etcd_store::create_topic_here(
    etcd_store* self, new_topic t) {
    auto deadline = clock::now() + self->_options.change_timeout;
    topic_record rec{protocol::uuid::random(), t.partitions, t.configs, t.replication_factor};
    const auto key = self->_keys.topic(t.name);
    const auto parts = self->_keys.partitions(t.name);
    etcd::txn_request create;
    create.compares.push_back(etcd::compare::absent(key));
    create.success.emplace_back(etcd::put_op{key, etcd_layout::encode(rec), 0});
    if (t.assignments.empty()) {
        // Records a crashed earlier incarnation of this name may have left must not place the
        // new one.
        create.success.emplace_back(etcd::delete_op{parts, etcd::prefix_end(parts)});
    } else {
        // A manual assignment: placed in the same txn (Kafka's PartitionRecords with the
        // TopicRecord), overwriting any such leftover of its partitions (etcd refuses a put
        // inside a range the same txn deletes).
        for (size_t p = 0; p < t.assignments.size(); ++p) {
            partition_state ps;
            ps.partition = static_cast<int32_t>(p);
            ps.replicas = t.assignments[p];
            ps.isr = ps.replicas;
            ps.leader = ps.replicas.front();
            create.success.emplace_back(etcd::put_op{self->_keys.partition(t.name, ps.partition),
                                                     etcd_layout::encode(to_record(ps)), 0});
        }
    }
    auto done_op = self->_client->txn(std::move(create));
    auto done = co_await std::move(done_op);
    if (!done) {
        co_return committed<topic_metadata>{self->failed(done.error()), nullptr};
    }
    self->note_reachable();
    if (!done.value().succeeded) {
        co_return committed<topic_metadata>{errc::topic_exists, nullptr};
    }
    co_return co_await self->wait_placed(t.name, rec.id, done.value().revision, deadline);
}

store::op<topic_metadata> etcd_store::create_topic(new_topic t) {
    if (!valid_topic_name(t.name)) {
        co_return errc::invalid_topic_name;
    }
    if (t.partitions < 1 || t.partitions > max_partitions_per_topic) {
        co_return errc::invalid_partitions;
    }
    if (!valid_configs(t.configs)) {
        co_return errc::invalid_config;
    }
    // The controller places only on brokers that may take new replicas: a topic wider than them
    // would stay unplaced until the change timeout (the handlers say so in Kafka's words first).
    // This broker counts once its session is registered, although the snapshot shows that only
    // when the watch has delivered it (a CreateTopics right after start).
    const auto snap = snapshot();
    int32_t eligible = snap->eligible_broker_count();
    if (_session && lease_id() != 0 && !snap->is_live(_session->self().node_id)) {
        ++eligible;
    }
    if (t.replication_factor < 1 || t.replication_factor > eligible) {
        co_return errc::invalid_replication_factor;
    }
    if (t.assignments.size() > max_manual_assignment_partitions ||
        (!t.assignments.empty() && t.assignments.size() != static_cast<size_t>(t.partitions))) {
        co_return errc::invalid_replica_assignment;
    }
    auto op = finish(create_topic_here(this, std::move(t)));
    co_return co_await std::move(op);
}

asio::awaitable<result<int64_t>> etcd_store::delete_topic_here(etcd_store* self, std::string name) {
    auto deadline = clock::now() + self->_options.change_timeout;
    const auto key = self->_keys.topic(name);
    const auto parts = self->_keys.partitions(name);
    while (!self->_stopping && clock::now() < deadline) {
        auto read = co_await self->read_topic(name);
        if (!read) {
            co_return read.error();
        }
        etcd::txn_request del;
        del.compares.push_back(etcd::compare::modified_at(key, read.value().mod_revision));
        del.success.emplace_back(etcd::delete_op{key, {}});
        del.success.emplace_back(etcd::delete_op{parts, etcd::prefix_end(parts)});
        auto done_op = self->_client->txn(std::move(del));
        auto done = co_await std::move(done_op);
        if (!done) {
            co_return self->failed(done.error());
        }
        if (done.value().succeeded) {
            co_return done.value().revision;
        }
    }
    co_return errc::timed_out;
}

store::op<void> etcd_store::delete_topic(std::string name) {
    auto r_op = finish(lift(delete_topic_here(this, std::move(name)), this));
    auto r = co_await std::move(r_op);
    co_return as_void(r);
}

asio::awaitable<etcd_store::committed<topic_metadata>> etcd_store::create_partitions_here(
    etcd_store* self, std::string name, int32_t total) {
    auto deadline = clock::now() + self->_options.change_timeout;
    protocol::uuid id;
    topic_edit grow = [total](topic_record& rec) -> std::error_code {
        if (total <= rec.partitions) {
            return errc::invalid_partitions;  // never shrinks
        }
        rec.partitions = total;
        return {};
    };
    auto rev_op = self->edit_topic(name, std::move(grow), deadline, &id);
    auto rev = co_await std::move(rev_op);
    if (!rev) {
        co_return committed<topic_metadata>{rev.error(), nullptr};
    }
    co_return co_await self->wait_placed(name, id, rev.value(), deadline);
}

store::op<topic_metadata> etcd_store::create_partitions(std::string name, int32_t total) {
    if (total < 1 || total > max_partitions_per_topic) {
        co_return errc::invalid_partitions;
    }
    auto op = finish(create_partitions_here(this, std::move(name), total));
    co_return co_await std::move(op);
}

asio::awaitable<result<int64_t>> etcd_store::set_topic_configs_here(etcd_store* self,
                                                                    std::string name,
                                                                    config::topic_overrides c) {
    auto deadline = clock::now() + self->_options.change_timeout;
    topic_edit replace = [c = std::move(c)](topic_record& rec) -> std::error_code {
        rec.configs = c;
        return {};
    };
    auto op = self->edit_topic(name, std::move(replace), deadline, nullptr);
    co_return co_await std::move(op);
}

store::op<void> etcd_store::set_topic_configs(std::string name, config::topic_overrides c) {
    if (!valid_configs(c)) {
        co_return errc::invalid_config;
    }
    auto op = finish(lift(set_topic_configs_here(this, std::move(name), std::move(c)), this));
    auto r = co_await std::move(op);
    co_return as_void(r);
}

// ---- broker configs ----

asio::awaitable<result<int64_t>> etcd_store::set_broker_configs_here(
    etcd_store* self, std::string entity, std::map<std::string, std::string> c) {
    return put_or_delete_here(self, self->_keys.broker_configs(entity),
                              c.empty() ? std::string() : etcd_layout::encode_broker_configs(c));
}

// Puts `value` at `key`, or deletes the key when `value` is empty.
asio::awaitable<result<int64_t>> etcd_store::put_or_delete_here(etcd_store* self, std::string key,
                                                                std::string value) {
    etcd::txn_request t;
    if (value.empty()) {
        // Delete only what exists: a delete of nothing makes no revision to wait for.
        t.compares.push_back(
            {key, etcd::compare::target::version, etcd::compare::op::greater, 0, {}, {}});
        t.success.emplace_back(etcd::delete_op{key, {}});
    } else {
        t.success.emplace_back(etcd::put_op{key, std::move(value), 0});
    }
    auto done_op = self->_client->txn(std::move(t));
    auto done = co_await std::move(done_op);
    if (!done) {
        co_return self->failed(done.error());
    }
    self->note_reachable();
    co_return done.value().succeeded ? done.value().revision : 0;
}

store::op<void> etcd_store::set_broker_configs(std::string entity,
                                               std::map<std::string, std::string> c) {
    // "" (cluster default) or a node id: what the key layout can name and the state shows.
    if (etcd_layout::parse(_keys, _keys.broker_configs(entity)).what !=
        etcd_layout::parsed_key::kind::broker_config) {
        co_return errc::invalid_config;
    }
    auto op = finish(lift(set_broker_configs_here(this, std::move(entity), std::move(c)), this));
    auto r = co_await std::move(op);
    co_return as_void(r);
}

// ---- finalized feature levels ----

asio::awaitable<result<int64_t>> etcd_store::write_features_here(etcd_store* self,
                                                                 finalized_features current,
                                                                 finalized_features next) {
    const auto key = self->_keys.features();
    etcd::txn_request t;
    t.compares.push_back(current.record_revision == 0
                             ? etcd::compare::absent(key)
                             : etcd::compare::modified_at(key, current.record_revision));
    t.success.emplace_back(etcd::put_op{key, etcd_layout::encode(next), 0});
    auto done_op = self->_client->txn(std::move(t));
    auto done = co_await std::move(done_op);
    if (!done) {
        co_return self->failed(done.error());
    }
    self->note_reachable();
    if (!done.value().succeeded) {
        co_return errc::stale_features;
    }
    co_return done.value().revision;
}

store::op<void> etcd_store::write_features(finalized_features current, finalized_features next) {
    auto op = finish(lift(write_features_here(this, current, next), this));
    auto r = co_await std::move(op);
    co_return as_void(r);
}

// ---- SCRAM credentials ----

store::op<void> etcd_store::set_user_scram_credentials(std::string user,
                                                       std::map<std::string, std::string> c) {
    if (user.empty()) {
        co_return errc::invalid_config;
    }
    auto key = _keys.user_scram(user);
    auto value = c.empty() ? std::string() : etcd_layout::encode_broker_configs(c);
    auto op = finish(lift(put_or_delete_here(this, std::move(key), std::move(value)), this));
    auto r = co_await std::move(op);
    co_return as_void(r);
}

// ---- group configs ----

store::op<void> etcd_store::set_group_configs(std::string group,
                                              std::map<std::string, std::string> c) {
    if (group.empty()) {
        co_return errc::invalid_config;  // no key names it (etcd_layout::parse)
    }
    auto key = _keys.group_configs(group);
    auto value = c.empty() ? std::string() : etcd_layout::encode_broker_configs(c);
    auto op = finish(lift(put_or_delete_here(this, std::move(key), std::move(value)), this));
    auto r = co_await std::move(op);
    co_return as_void(r);
}

// ---- producer ids ----

asio::awaitable<etcd_store::committed<producer_id_block>> etcd_store::allocate_here(
    etcd_store* self, int32_t count) {
    using out = committed<producer_id_block>;
    auto deadline = clock::now() + self->_options.change_timeout;
    const auto key = self->_keys.producer_ids();
    auto first_op = self->_client->range(key);
    auto first = co_await std::move(first_op);
    if (!first) {
        co_return out{self->failed(first.error()), nullptr};
    }
    std::optional<etcd::key_value> current;
    if (!first.value().kvs.empty()) {
        current = first.value().kvs.front();
    }
    while (!self->_stopping && clock::now() < deadline) {
        int64_t next = 0;
        if (current) {
            auto decoded = etcd_layout::decode_producer_id(current->value);
            if (!decoded) {
                log::get("metadata")->error("{} holds no producer id: refusing to guess one", key);
                co_return out{errc::persist_failed, nullptr};
            }
            next = decoded.value();
        }
        if (next > std::numeric_limits<int64_t>::max() - count) {
            co_return out{errc::persist_failed, nullptr};
        }
        etcd::txn_request t;
        t.compares.push_back(current ? etcd::compare::modified_at(key, current->mod_revision)
                                     : etcd::compare::absent(key));
        t.success.emplace_back(etcd::put_op{key, etcd_layout::encode_producer_id(next + count), 0});
        // On a lost race the failure branch reads what the winner wrote: one round trip a try.
        t.failure.emplace_back(etcd::range_op{key, {}, 0});
        auto done_op = self->_client->txn(std::move(t));
        auto done = co_await std::move(done_op);
        if (!done) {
            co_return out{self->failed(done.error()), nullptr};
        }
        self->note_reachable();
        if (done.value().succeeded) {
            producer_id_block block{next, count};
            auto seen = co_await self->visible_at(done.value().revision, deadline);
            // The ids are ours once etcd has the new counter: hand them out even when the
            // snapshot lags, rather than failing a request whose ids nobody else will get.
            co_return out{block, seen.visible};
        }
        current.reset();
        if (!done.value().ranges.empty() && !done.value().ranges.front().kvs.empty()) {
            current = done.value().ranges.front().kvs.front();
        }
    }
    co_return out{errc::timed_out, nullptr};
}

store::op<producer_id_block> etcd_store::allocate_producer_ids(int32_t count) {
    if (count <= 0) {
        co_return errc::invalid_config;
    }
    if (auto ids = _producer_ids.take(count)) {
        co_return *ids;
    }
    auto op = finish(allocate_here(this, _producer_ids.chunk_for(count)));
    auto reserved = co_await std::move(op);
    if (!reserved) {
        co_return reserved.error();
    }
    co_return _producer_ids.install(reserved.value(), count);
}

}  // namespace spool::broker::metadata
