#include "broker/metadata/embedded_store.h"

#include "broker/metadata/errc.h"
#include "common/log.h"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace spool::broker::metadata {

namespace fs = std::filesystem;

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
        st->_state = std::make_shared<cluster_state>(std::move(loaded).value());
        return st;
    }
    auto fresh = std::make_shared<cluster_state>();
    fresh->cluster_id = protocol::uuid::random().to_string();
    std::lock_guard lock(st->_mutex);
    SPOOL_TRY(st->commit(std::move(fresh)));
    log::get("metadata")
        ->info("created {} (cluster id {})", st->_file.string(), st->_state->cluster_id);
    return st;
}

cluster_snapshot embedded_store::snapshot() const {
    std::lock_guard lock(_mutex);
    return _state;
}

result<void> embedded_store::commit(std::shared_ptr<cluster_state> next) {
    next->version = (_state ? _state->version : 0) + 1;
    if (!write_atomically(_file, serialize(*next))) {
        log::get("metadata")->error("cannot write {}: {}", _file.string(), std::strerror(errno));
        return errc::persist_failed;
    }
    _state = std::move(next);
    return success();
}

namespace {

partition_state new_partition(int32_t index, int32_t leader) {
    return partition_state{index, leader, 0, {leader}, {leader}};
}

}  // namespace

result<topic_metadata> embedded_store::create_topic(const new_topic& t, int32_t leader) {
    if (!valid_topic_name(t.name)) {
        return errc::invalid_topic_name;
    }
    if (t.partitions < 1) {
        return errc::invalid_partitions;
    }
    if (t.replication_factor != 1) {
        // One broker holds one replica of each partition.
        return errc::invalid_replication_factor;
    }
    for (const auto& [k, v] : t.configs) {
        if (!config::validate_topic_override(k, v).empty()) {
            return errc::invalid_config;
        }
    }
    std::lock_guard lock(_mutex);
    if (_state->find(t.name) != nullptr) {
        return errc::topic_exists;
    }
    auto next = std::make_shared<cluster_state>(*_state);
    topic_metadata md;
    md.name = t.name;
    do {
        md.id = protocol::uuid::random();
    } while (next->topic_names.contains(md.id));
    md.configs = t.configs;
    for (int32_t i = 0; i < t.partitions; ++i) {
        md.partitions.push_back(new_partition(i, leader));
    }
    next->topic_names.emplace(md.id, md.name);
    next->topics.emplace(md.name, md);
    SPOOL_TRY(commit(std::move(next)));
    return md;
}

result<void> embedded_store::delete_topic(std::string_view name) {
    std::lock_guard lock(_mutex);
    const topic_metadata* t = _state->find(name);
    if (t == nullptr) {
        return errc::unknown_topic;
    }
    auto next = std::make_shared<cluster_state>(*_state);
    next->topic_names.erase(t->id);
    next->topics.erase(next->topics.find(name));
    return commit(std::move(next));
}

result<topic_metadata> embedded_store::create_partitions(std::string_view name, int32_t total,
                                                         int32_t leader) {
    std::lock_guard lock(_mutex);
    const topic_metadata* t = _state->find(name);
    if (t == nullptr) {
        return errc::unknown_topic;
    }
    if (total <= static_cast<int32_t>(t->partitions.size())) {
        return errc::invalid_partitions;
    }
    auto next = std::make_shared<cluster_state>(*_state);
    auto& md = next->topics.find(name)->second;
    for (auto i = static_cast<int32_t>(md.partitions.size()); i < total; ++i) {
        md.partitions.push_back(new_partition(i, leader));
    }
    topic_metadata copy = md;
    SPOOL_TRY(commit(std::move(next)));
    return copy;
}

result<void> embedded_store::set_topic_configs(std::string_view name, config::topic_overrides c) {
    for (const auto& [k, v] : c) {
        if (!config::validate_topic_override(k, v).empty()) {
            return errc::invalid_config;
        }
    }
    std::lock_guard lock(_mutex);
    if (_state->find(name) == nullptr) {
        return errc::unknown_topic;
    }
    auto next = std::make_shared<cluster_state>(*_state);
    next->topics.find(name)->second.configs = std::move(c);
    return commit(std::move(next));
}

result<void> embedded_store::set_broker_configs(std::string_view entity,
                                                std::map<std::string, std::string> c) {
    std::lock_guard lock(_mutex);
    auto next = std::make_shared<cluster_state>(*_state);
    if (c.empty()) {
        next->broker_configs.erase(std::string(entity));
    } else {
        next->broker_configs[std::string(entity)] = std::move(c);
    }
    return commit(std::move(next));
}

result<producer_id_block> embedded_store::allocate_producer_ids(int32_t count) {
    if (count <= 0) {
        return errc::invalid_config;
    }
    std::lock_guard lock(_mutex);
    auto next = std::make_shared<cluster_state>(*_state);
    producer_id_block block{next->next_producer_id, count};
    next->next_producer_id += count;
    SPOOL_TRY(commit(std::move(next)));
    return block;
}

}  // namespace spool::broker::metadata
