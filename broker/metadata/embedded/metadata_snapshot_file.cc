#include "broker/metadata/embedded/metadata_snapshot_file.h"

#include "broker/metadata/errc.h"
#include "broker/metadata/json_fields.h"
#include "broker/metadata/records.h"
#include "common/log.h"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace spool::broker::metadata {

namespace fs = std::filesystem;

namespace {

using nested_map = std::map<std::string, std::map<std::string, std::string>>;

// `key: {"<outer>": {k: "v"}}`: broker_configs, user_scram and group_configs.
void emit_nested(YAML::Emitter& out, const char* key, const nested_map& m) {
    out << YAML::Key << key << YAML::Value << YAML::BeginMap;
    for (const auto& [outer, values] : m) {
        out << YAML::Key << YAML::DoubleQuoted << outer << YAML::Value << YAML::BeginMap;
        for (const auto& [k, v] : values) {
            out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
        }
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
}

void read_nested(const YAML::Node& node, nested_map& m) {
    for (const auto& en : node) {
        auto& values = m[en.first.as<std::string>()];
        for (const auto& kv : en.second) {
            values.emplace(kv.first.as<std::string>(), kv.second.as<std::string>());
        }
    }
}

}  // namespace

std::string serialize(const cluster_state& s, int64_t journal_seq) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "format" << YAML::Value << 1;
    out << YAML::Key << "cluster_id" << YAML::Value << s.cluster_id;
    out << YAML::Key << "next_producer_id" << YAML::Value << s.next_producer_id;
    out << YAML::Key << "journal_seq" << YAML::Value << journal_seq;
    if (s.features.stored()) {
        // Absent in a file of Spool 0.3 (metadata.version 32, features.h).
        out << YAML::Key << "features" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "metadata.version" << YAML::Value << s.features.metadata_version;
        if (s.features.transaction_version) {
            out << YAML::Key << "transaction.version" << YAML::Value
                << *s.features.transaction_version;
        }
        out << YAML::Key << "epoch" << YAML::Value << s.features.epoch;
        out << YAML::EndMap;
    }
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
    // Each binding as its JSON text (records.h), the journal's and etcd's form.
    out << YAML::Key << "acls" << YAML::Value << YAML::BeginSeq;
    for (const auto& b : s.acls->bindings()) {
        out << YAML::DoubleQuoted << json_fields::dump(to_json(b));
    }
    out << YAML::EndSeq;
    emit_nested(out, "broker_configs", s.broker_configs);
    emit_nested(out, "user_scram", s.user_scram);
    emit_nested(out, "group_configs", s.group_configs);
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

result<metadata_snapshot> deserialize(std::string_view yaml) {
    metadata_snapshot out;
    cluster_state& s = out.state;
    try {
        YAML::Node root = YAML::Load(std::string(yaml));
        if (root["format"].as<int>() != 1) {
            return errc::invalid_config;
        }
        s.cluster_id = root["cluster_id"].as<std::string>();
        s.next_producer_id = root["next_producer_id"].as<int64_t>();
        // Absent in files written before the journal: nothing journalled yet.
        out.journal_seq = root["journal_seq"] ? root["journal_seq"].as<int64_t>() : int64_t{0};
        if (out.journal_seq < 0) {
            return errc::invalid_config;
        }
        if (const auto f = root["features"]) {
            s.features.metadata_version = f["metadata.version"].as<int16_t>();
            if (f["transaction.version"]) {
                s.features.transaction_version = f["transaction.version"].as<int16_t>();
            }
            s.features.epoch = f["epoch"].as<int64_t>();
            if (s.features.epoch < 1) {
                return errc::invalid_config;
            }
        }
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
        // Absent in files written before ACLs were kept.
        std::vector<security::acl_binding> acls;
        for (const auto& an : root["acls"]) {
            auto j = json_fields::parse(an.as<std::string>());
            if (!j) {
                return errc::invalid_config;
            }
            auto b = acl_from_json(*j);
            if (!b) {
                return errc::invalid_config;
            }
            acls.push_back(std::move(b).value());
        }
        if (!acls.empty()) {
            s.acls = std::make_shared<const security::acl_index>(std::move(acls));
        }
        read_nested(root["broker_configs"], s.broker_configs);
        // Absent in snapshots written before SCRAM credentials existed.
        read_nested(root["user_scram"], s.user_scram);
        // Absent in snapshots written before group configs existed.
        read_nested(root["group_configs"], s.group_configs);
    } catch (const YAML::Exception&) {
        return errc::invalid_config;
    }
    return out;
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

result<uint64_t> write_snapshot(const fs::path& path, const cluster_state& s, int64_t journal_seq) {
    std::string text = serialize(s, journal_seq);
    if (!write_atomically(path, text)) {
        std::error_code ec(errno, std::generic_category());
        log::get("metadata")->error("cannot write {}: {}", path.string(), ec.message());
        return errc::persist_failed;
    }
    return text.size();
}

result<metadata_snapshot> read_snapshot(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
        log::get("metadata")->error("cannot read {}", path.string());
        return errc::invalid_config;
    }
    auto loaded = deserialize(text.str());
    if (!loaded) {
        log::get("metadata")->error("cannot parse {}", path.string());
    }
    return loaded;
}

}  // namespace spool::broker::metadata
