#include "broker/metadata/embedded/embedded_store.h"

#include "broker/metadata/controller/plan/isr_update_check.h"
#include "broker/metadata/embedded/metadata_journal.h"
#include "broker/metadata/embedded/metadata_snapshot_file.h"
#include "broker/metadata/errc.h"
#include "common/log.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace spool::broker::metadata {

namespace fs = std::filesystem;
namespace asio = boost::asio;

bool valid_topic_name(std::string_view name) {
    if (name.empty() || name.size() > 249 || name == "." || name == "..") {
        return false;
    }
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

namespace {

// Replays the journal files onto snap, in order, from the record after snap.journal_seq on;
// returns the last seq applied. A torn last line of the last file (a crash during its append,
// which was never acknowledged) is dropped; damage anywhere else, a gap in the seqs or a record
// that does not fit the state refuse the whole state.
result<int64_t> replay(const std::vector<journal::file_entry>& files, metadata_snapshot& snap) {
    auto logger = log::get("metadata");
    int64_t seq = snap.journal_seq;
    for (size_t i = 0; i < files.size(); ++i) {
        const auto& path = files[i].path;
        auto contents = journal::read_file(path);
        if (!contents) {
            logger->error("cannot read {}: {}", path.string(), contents.error().message());
            return errc::invalid_config;
        }
        if (contents.value().bad_bytes > 0) {
            if (contents.value().damaged_in_the_middle || i + 1 < files.size()) {
                logger->error("{} is damaged at byte {}: refusing to start from part of it",
                              path.string(), contents.value().valid_bytes);
                return errc::invalid_config;
            }
            logger->warn("{}: dropping the last {} bytes, an append cut short (never acknowledged)",
                         path.string(), contents.value().bad_bytes);
        }
        for (const auto& r : contents.value().records) {
            if (r.seq <= seq) {
                continue;  // already in the snapshot
            }
            if (r.seq != seq + 1) {
                logger->error("{}: record {} follows record {}: a record is missing", path.string(),
                              r.seq, seq);
                return errc::invalid_config;
            }
            if (auto applied = journal::apply(snap.state, r); !applied) {
                logger->error("{}: record {} does not fit the state before it", path.string(),
                              r.seq);
                return errc::invalid_config;
            }
            seq = r.seq;
        }
    }
    return seq;
}

// Removes the journal files whose records are all in a snapshot of up to seq: those starting
// at or before it (the file in use starts after it).
void remove_journals_up_to(const fs::path& dir, int64_t seq) {
    auto files = journal::list_files(dir);
    if (!files) {
        return;
    }
    for (const auto& f : files.value()) {
        std::error_code ec;
        if (f.first_seq <= seq && !fs::remove(f.path, ec) && ec) {
            log::get("metadata")->warn("cannot remove {}: {}", f.path.string(), ec.message());
        }
    }
}

// A change that sets one entry of a map-of-maps in the state (an empty value removes it):
// broker_configs, user_scram and group_configs.
using nested_map = std::map<std::string, std::map<std::string, std::string>>;
std::function<result<std::monostate>(cluster_state&)> replace_entry(
    nested_map cluster_state::*member, std::string key, std::map<std::string, std::string> value) {
    return [member, key = std::move(key),
            value = std::move(value)](cluster_state& next) -> result<std::monostate> {
        if (value.empty()) {
            (next.*member).erase(key);
        } else {
            (next.*member)[key] = value;
        }
        return std::monostate{};
    };
}

}  // namespace

result<std::unique_ptr<embedded_store>> embedded_store::open(const fs::path& data_dir,
                                                             embedded_store_options options) {
    std::error_code ec;
    fs::create_directories(data_dir, ec);
    if (ec) {
        return ec;
    }
    // The store keeps its options, but the refusal string outlives only this call.
    auto kept = options;
    kept.refusal = nullptr;
    std::unique_ptr<embedded_store> st(new embedded_store(data_dir, kept));
    auto logger = log::get("metadata");
    auto journals = journal::list_files(data_dir);
    if (!journals) {
        return journals.error();
    }
    metadata_snapshot loaded;
    if (fs::exists(st->_file)) {
        SPOOL_TRY(snap, read_snapshot(st->_file));
        loaded = std::move(snap);
    } else if (!journals.value().empty()) {
        logger->error("{} is missing but journal files are there: refusing to start without it",
                      st->_file.string());
        return errc::invalid_config;
    } else {
        // Nothing runs yet: the first state is written on the opening thread.
        loaded.state.cluster_id = protocol::uuid::random().to_string();
        loaded.state.features = bootstrap_features();
        loaded.state.version = 1;
        SPOOL_TRY(written, write_snapshot(st->_file, loaded.state, 0));
        st->_snapshot_bytes = written;
        logger->info("created {} (cluster id {})", st->_file.string(), loaded.state.cluster_id);
    }
    SPOOL_TRY(seq, replay(journals.value(), loaded));
    if (auto why = unsupported_reason(loaded.state.features); !why.empty()) {
        logger->error("refusing to start: {}", why);
        if (options.refusal != nullptr) {
            *options.refusal = why;
        }
        return errc::unsupported_feature_level;
    }
    if (seq > loaded.journal_seq) {
        // Fold what was replayed into a new snapshot: the journal starts empty.
        SPOOL_TRY(written, write_snapshot(st->_file, loaded.state, seq));
        st->_snapshot_bytes = written;
        logger->info("{}: {} journal records since the last snapshot replayed and folded in",
                     st->_file.string(), seq - loaded.journal_seq);
    } else if (st->_snapshot_bytes == 0) {
        auto bytes = fs::file_size(st->_file, ec);
        st->_snapshot_bytes = ec ? 0 : bytes;
    }
    // Every file's records are now in the snapshot (or it had none).
    remove_journals_up_to(data_dir, std::numeric_limits<int64_t>::max());
    auto journal = journal::journal_file::create(journal::file_for(data_dir, seq + 1));
    if (!journal) {
        logger->error("cannot create {}: {}", journal::file_for(data_dir, seq + 1).string(),
                      journal.error().message());
        return errc::persist_failed;
    }
    st->_journal.emplace(std::move(journal).value());
    st->_seq = seq;
    st->_snapshot_seq = seq;
    st->set_committed(std::make_shared<cluster_state>(std::move(loaded.state)));
    return st;
}

embedded_store::~embedded_store() {
    stop();
}

void embedded_store::set_local_broker(broker_registration self) {
    auto next = std::make_shared<cluster_state>(*_committed);
    _local_node = self.node_id;
    next->controller_id = self.node_id;
    next->brokers = {{self.node_id, std::move(self)}};
    set_committed(next);
}

void embedded_store::set_committed(cluster_snapshot s) {
    _committed = s;
    _publisher.publish(std::move(s));
}

void embedded_store::attach(runtime::shard_pool& pool) {
    _publisher.attach(pool);
}

void embedded_store::stop() {
    _stopped = true;
    _writer.stop();
    _snapshotter.stop();
    // A clean stop folds the journal into the snapshot, so the next start replays nothing and
    // the one file holds the whole state. If the snapshot cannot be written, the journal stays
    // for the next start to replay.
    if (!_journal) {
        return;
    }
    _journal.reset();
    if (_seq == _snapshot_seq.load() || write_snapshot(_file, *_committed, _seq)) {
        remove_journals_up_to(_dir, _seq + 1);
    }
}

cluster_snapshot embedded_store::snapshot() const {
    return _publisher.snapshot();
}

result<void> embedded_store::persist(const cluster_state& before, const cluster_state& next) {
    auto record = journal::diff(before, next, _seq + 1);
    if (record.changes.empty()) {
        return success();
    }
    if (auto appended = _journal->append(journal::encode(record)); !appended) {
        log::get("metadata")
            ->error("cannot append to {}: {}", _journal->path().string(),
                    appended.error().message());
        return errc::persist_failed;
    }
    _seq = record.seq;
    return success();
}

void embedded_store::snapshot_if_due(cluster_snapshot committed) {
    const uint64_t due_at = std::max(_options.journal_snapshot_bytes, _snapshot_bytes.load());
    if (_journal->size() < due_at || _snapshotting.load()) {
        return;
    }
    // Later records go to a new file; the snapshot then covers every older file.
    auto next_file = journal::journal_file::create(journal::file_for(_dir, _seq + 1));
    if (!next_file) {
        log::get("metadata")
            ->warn("cannot start a new journal file: {}", next_file.error().message());
        return;
    }
    _journal.emplace(std::move(next_file).value());
    _snapshotting = true;
    _snapshotter.post([this, committed = std::move(committed), seq = _seq] {
        if (auto written = write_snapshot(_file, *committed, seq)) {
            _snapshot_bytes = written.value();
            _snapshot_seq = seq;
            remove_journals_up_to(_dir, seq);
        }
        _snapshotting = false;
    });
}

template <class T>
embedded_store::commit_outcome<T> embedded_store::apply(const change_fn<T>& change) {
    if (_stopped) {
        return {errc::persist_failed, nullptr};
    }
    auto next = std::make_shared<cluster_state>(*_committed);
    auto r = change(*next);
    if (!r) {
        return {r.error(), nullptr};
    }
    next->version = _committed->version + 1;
    if (auto w = persist(*_committed, *next); !w) {
        return {w.error(), nullptr};
    }
    auto before = _committed;
    set_committed(next);
    notify_listeners(before, next);
    snapshot_if_due(next);
    return {std::move(r), std::move(next)};
}

template <class T>
store::op<T> embedded_store::commit(change_fn<T> change) {
    std::function<commit_outcome<T>()> work = [this, change = std::move(change)] {
        return apply(change);
    };
    auto op = runtime::run_blocking<commit_outcome<T>>(_writer, std::move(work));
    auto out = co_await std::move(op);
    if (out.published) {
        co_await _publisher.wait_visible(out.published);
    }
    co_return std::move(out.value);
}

store::op<void> embedded_store::commit_void(change_fn<std::monostate> change) {
    auto op = commit<std::monostate>(std::move(change));
    auto r = co_await std::move(op);
    if (!r) {
        co_return r.error();
    }
    co_return success();
}

namespace {

partition_state new_partition(int32_t index, int32_t leader) {
    partition_state p;
    p.partition = index;
    p.leader = leader;
    p.replicas = {leader};
    p.isr = {leader};
    return p;
}

}  // namespace

store::op<topic_metadata> embedded_store::create_topic(new_topic t) {
    const int32_t leader = _local_node;
    if (!valid_topic_name(t.name)) {
        co_return errc::invalid_topic_name;
    }
    if (t.partitions < 1) {
        co_return errc::invalid_partitions;
    }
    if (t.replication_factor != 1) {
        // One broker holds one replica of each partition.
        co_return errc::invalid_replication_factor;
    }
    for (const auto& [k, v] : t.configs) {
        if (!config::validate_topic_override(k, v).empty()) {
            co_return errc::invalid_config;
        }
    }
    change_fn<topic_metadata> change = [t = std::move(t),
                                        leader](cluster_state& next) -> result<topic_metadata> {
        if (next.find(t.name) != nullptr) {
            return errc::topic_exists;
        }
        topic_metadata md;
        md.name = t.name;
        do {
            md.id = protocol::uuid::random();
        } while (next.topic_names.contains(md.id));
        md.configs = t.configs;
        for (int32_t i = 0; i < t.partitions; ++i) {
            md.partitions.push_back(new_partition(i, leader));
        }
        next.topic_names.emplace(md.id, md.name);
        next.topics.emplace(md.name, md);
        return md;
    };
    co_return co_await commit(std::move(change));
}

store::op<void> embedded_store::delete_topic(std::string name) {
    change_fn<std::monostate> change =
        [name = std::move(name)](cluster_state& next) -> result<std::monostate> {
        auto it = next.topics.find(name);
        if (it == next.topics.end()) {
            return errc::unknown_topic;
        }
        next.topic_names.erase(it->second.id);
        next.topics.erase(it);
        return std::monostate{};
    };
    co_return co_await commit_void(std::move(change));
}

store::op<topic_metadata> embedded_store::create_partitions(std::string name, int32_t total) {
    const int32_t leader = _local_node;
    change_fn<topic_metadata> change = [name = std::move(name), total,
                                        leader](cluster_state& next) -> result<topic_metadata> {
        auto it = next.topics.find(name);
        if (it == next.topics.end()) {
            return errc::unknown_topic;
        }
        auto& md = it->second;
        if (total <= static_cast<int32_t>(md.partitions.size())) {
            return errc::invalid_partitions;
        }
        for (auto i = static_cast<int32_t>(md.partitions.size()); i < total; ++i) {
            md.partitions.push_back(new_partition(i, leader));
        }
        return md;
    };
    co_return co_await commit(std::move(change));
}

store::op<void> embedded_store::set_topic_configs(std::string name, config::topic_overrides c) {
    for (const auto& [k, v] : c) {
        if (!config::validate_topic_override(k, v).empty()) {
            co_return errc::invalid_config;
        }
    }
    change_fn<std::monostate> change =
        [name = std::move(name), c = std::move(c)](cluster_state& next) -> result<std::monostate> {
        auto it = next.topics.find(name);
        if (it == next.topics.end()) {
            return errc::unknown_topic;
        }
        it->second.configs = c;
        return std::monostate{};
    };
    co_return co_await commit_void(std::move(change));
}

store::op<void> embedded_store::set_broker_configs(std::string entity,
                                                   std::map<std::string, std::string> c) {
    co_return co_await commit_void(replace_entry(&cluster_state::broker_configs,
                                                 std::move(entity), std::move(c)));
}

store::op<void> embedded_store::write_features(finalized_features current,
                                               finalized_features next) {
    change_fn<std::monostate> change = [current,
                                        next](cluster_state& s) -> result<std::monostate> {
        if (!(s.features == current)) {
            return errc::stale_features;
        }
        s.features = next;
        return std::monostate{};
    };
    co_return co_await commit_void(std::move(change));
}

store::op<void> embedded_store::set_user_scram_credentials(std::string user,
                                                           std::map<std::string, std::string> c) {
    co_return co_await commit_void(
        replace_entry(&cluster_state::user_scram, std::move(user), std::move(c)));
}

store::op<void> embedded_store::set_group_configs(std::string group,
                                                  std::map<std::string, std::string> c) {
    co_return co_await commit_void(
        replace_entry(&cluster_state::group_configs, std::move(group), std::move(c)));
}

store::op<void> embedded_store::create_acls(std::vector<security::acl_binding> bindings) {
    change_fn<std::monostate> change =
        [bindings = std::move(bindings)](cluster_state& next) -> result<std::monostate> {
        next.acls = security::with_bindings(next.acls, bindings);
        return std::monostate{};
    };
    co_return co_await commit_void(std::move(change));
}

store::op<void> embedded_store::delete_acls(std::vector<security::acl_binding> bindings) {
    change_fn<std::monostate> change =
        [bindings = std::move(bindings)](cluster_state& next) -> result<std::monostate> {
        next.acls = security::without_bindings(next.acls, bindings);
        return std::monostate{};
    };
    co_return co_await commit_void(std::move(change));
}

store::op<partition_state> embedded_store::alter_isr(isr_update u) {
    const int32_t self = _local_node;
    change_fn<partition_state> change = [u = std::move(u),
                                         self](cluster_state& next) -> result<partition_state> {
        SPOOL_TRY(checked, check_isr_update(next, self, u));
        auto& p = next.topics.find(u.topic)->second.partitions[static_cast<size_t>(u.partition)];
        p = std::move(checked.next);
        return p;
    };
    co_return co_await commit(std::move(change));
}

store::op<producer_id_block> embedded_store::allocate_producer_ids(int32_t count) {
    if (count <= 0) {
        co_return errc::invalid_config;
    }
    if (auto ids = _producer_ids.take(count)) {
        co_return *ids;
    }
    const int32_t chunk = _producer_ids.chunk_for(count);
    change_fn<producer_id_block> change =
        [chunk](cluster_state& next) -> result<producer_id_block> {
        if (next.next_producer_id > std::numeric_limits<int64_t>::max() - chunk) {
            return errc::persist_failed;
        }
        producer_id_block reserved{next.next_producer_id, chunk};
        next.next_producer_id += chunk;
        return reserved;
    };
    auto reserved = co_await commit(std::move(change));
    if (!reserved) {
        co_return reserved.error();
    }
    co_return _producer_ids.install(reserved.value(), count);
}

}  // namespace spool::broker::metadata
