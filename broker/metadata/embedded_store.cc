#include "broker/metadata/embedded_store.h"

#include "broker/metadata/errc.h"
#include "broker/metadata/isr_update_check.h"
#include "common/log.h"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <limits>
#include <sstream>
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

std::string serialize(const cluster_state& s) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "format" << YAML::Value << 1;
    out << YAML::Key << "cluster_id" << YAML::Value << s.cluster_id;
    out << YAML::Key << "next_producer_id" << YAML::Value << s.next_producer_id;
    out << YAML::Key << "topics" << YAML::Value << YAML::BeginSeq;
    for (const auto& [name, t] : s.topics) {
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << t.name;
        out << YAML::Key << "id" << YAML::Value << YAML::DoubleQuoted << t.id.to_string();
        out << YAML::Key << "configs" << YAML::Value << YAML::BeginMap;
        for (const auto& [k, v] : t.configs) {
            out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
        }
        out << YAML::EndMap;
        out << YAML::Key << "partitions" << YAML::Value << YAML::BeginSeq;
        for (const auto& p : t.partitions) {
            out << YAML::Flow << YAML::BeginMap;
            out << YAML::Key << "partition" << YAML::Value << p.partition;
            out << YAML::Key << "leader" << YAML::Value << p.leader;
            out << YAML::Key << "leader_epoch" << YAML::Value << p.leader_epoch;
            out << YAML::Key << "partition_epoch" << YAML::Value << p.partition_epoch;
            out << YAML::Key << "replicas" << YAML::Value << YAML::Flow << p.replicas;
            out << YAML::Key << "isr" << YAML::Value << YAML::Flow << p.isr;
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::Key << "broker_configs" << YAML::Value << YAML::BeginMap;
    for (const auto& [entity, configs] : s.broker_configs) {
        out << YAML::Key << YAML::DoubleQuoted << entity << YAML::Value << YAML::BeginMap;
        for (const auto& [k, v] : configs) {
            out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
        }
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

result<cluster_state> deserialize(std::string_view yaml) {
    cluster_state s;
    try {
        YAML::Node root = YAML::Load(std::string(yaml));
        if (root["format"].as<int>() != 1) {
            return errc::invalid_config;
        }
        s.cluster_id = root["cluster_id"].as<std::string>();
        s.next_producer_id = root["next_producer_id"].as<int64_t>();
        for (const auto& tn : root["topics"]) {
            topic_metadata t;
            t.name = tn["name"].as<std::string>();
            auto id = protocol::uuid::parse(tn["id"].as<std::string>());
            if (!id) {
                return errc::invalid_config;
            }
            t.id = *id;
            for (const auto& kv : tn["configs"]) {
                t.configs.emplace(kv.first.as<std::string>(), kv.second.as<std::string>());
            }
            for (const auto& pn : tn["partitions"]) {
                partition_state p;
                p.partition = pn["partition"].as<int32_t>();
                p.leader = pn["leader"].as<int32_t>();
                p.leader_epoch = pn["leader_epoch"].as<int32_t>();
                // Absent in files written before ISR changes were kept.
                p.partition_epoch =
                    pn["partition_epoch"] ? pn["partition_epoch"].as<int32_t>() : int32_t{0};
                p.replicas = pn["replicas"].as<std::vector<int32_t>>();
                p.isr = pn["isr"].as<std::vector<int32_t>>();
                t.partitions.push_back(std::move(p));
            }
            s.topic_names.emplace(t.id, t.name);
            s.topics.emplace(t.name, std::move(t));
        }
        for (const auto& en : root["broker_configs"]) {
            auto& m = s.broker_configs[en.first.as<std::string>()];
            for (const auto& kv : en.second) {
                m.emplace(kv.first.as<std::string>(), kv.second.as<std::string>());
            }
        }
    } catch (const YAML::Exception&) {
        return errc::invalid_config;
    }
    return s;
}

namespace {

// Writes text to path atomically and durably.
bool write_atomically(const fs::path& path, const std::string& text) {
    fs::path tmp = path;
    tmp += ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return false;
    }
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            ::close(fd);
            return false;
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        return false;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        return false;
    }
    int dfd = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return true;
}

}  // namespace

result<std::unique_ptr<embedded_store>> embedded_store::open(const fs::path& data_dir) {
    std::error_code ec;
    fs::create_directories(data_dir, ec);
    if (ec) {
        return ec;
    }
    std::unique_ptr<embedded_store> st(new embedded_store(data_dir / "spool-metadata.yaml"));
    if (fs::exists(st->_file)) {
        std::ifstream in(st->_file);
        std::stringstream ss;
        ss << in.rdbuf();
        auto loaded = deserialize(ss.str());
        if (!loaded) {
            log::get("metadata")->error("cannot parse {}", st->_file.string());
            return loaded.error();
        }
        st->set_committed(std::make_shared<cluster_state>(std::move(loaded).value()));
        return st;
    }
    // Nothing runs yet: the first state is written on the opening thread.
    auto fresh = std::make_shared<cluster_state>();
    fresh->cluster_id = protocol::uuid::random().to_string();
    fresh->version = 1;
    SPOOL_TRY(st->persist(*fresh));
    st->set_committed(fresh);
    log::get("metadata")->info("created {} (cluster id {})", st->_file.string(), fresh->cluster_id);
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
}

cluster_snapshot embedded_store::snapshot() const {
    return _publisher.snapshot();
}

result<void> embedded_store::persist(const cluster_state& next) {
    if (!write_atomically(_file, serialize(next))) {
        log::get("metadata")->error("cannot write {}: {}", _file.string(), std::strerror(errno));
        return errc::persist_failed;
    }
    return success();
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
    if (auto w = persist(*next); !w) {
        return {w.error(), nullptr};
    }
    auto before = _committed;
    set_committed(next);
    notify_listeners(before, next);
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
    change_fn<std::monostate> change = [entity = std::move(entity), c = std::move(c)](
                                           cluster_state& next) -> result<std::monostate> {
        if (c.empty()) {
            next.broker_configs.erase(entity);
        } else {
            next.broker_configs[entity] = c;
        }
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
