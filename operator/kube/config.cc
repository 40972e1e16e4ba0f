#include "operator/kube/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace spool::op::kube {

namespace {

result<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return make_error("ConfigError", fmt::format("cannot read {}", path), false);
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

YAML::Node find_named(const YAML::Node& list, const std::string& name, const char* field) {
    if (list && list.IsSequence()) {
        for (const auto& item : list) {
            if (item["name"] && item["name"].as<std::string>() == name) {
                return item[field];
            }
        }
    }
    return YAML::Node(YAML::NodeType::Undefined);
}

// A kubeconfig field is either inline base64 (`<name>-data`) or a path to a file.
result<std::string> data_or_file(const YAML::Node& node, const std::string& name,
                                 const std::filesystem::path& base) {
    if (node[name + "-data"]) {
        return base64_decode(node[name + "-data"].as<std::string>());
    }
    if (node[name]) {
        std::filesystem::path p = node[name].as<std::string>();
        return read_file((p.is_absolute() ? p : base / p).string());
    }
    return std::string();
}

}  // namespace

result<std::string> base64_decode(const std::string& text) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z')
            return c - 'A';
        if (c >= 'a' && c <= 'z')
            return c - 'a' + 26;
        if (c >= '0' && c <= '9')
            return c - '0' + 52;
        if (c == '+')
            return 62;
        if (c == '/')
            return 63;
        return -1;
    };
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        if (c == '=' || c == '\n' || c == '\r' || c == ' ') {
            continue;
        }
        int v = value(c);
        if (v < 0) {
            return make_error("ConfigError", "invalid base64 data", false);
        }
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xff));
        }
    }
    return out;
}

std::string base64_encode(std::string_view bytes) {
    static constexpr char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) |
                     uint32_t(uint8_t(bytes[i + 2]));
        for (int shift : {18, 12, 6, 0}) {
            out.push_back(alphabet[(v >> shift) & 63]);
        }
    }
    if (size_t rest = bytes.size() - i; rest > 0) {
        uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
        if (rest == 2) {
            v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
        }
        out.push_back(alphabet[(v >> 18) & 63]);
        out.push_back(alphabet[(v >> 12) & 63]);
        out.push_back(rest == 2 ? alphabet[(v >> 6) & 63] : '=');
        out.push_back('=');
    }
    return out;
}

result<config> load_kubeconfig(const std::string& path, const std::string& context) {
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::Exception& e) {
        return make_error("ConfigError", fmt::format("cannot parse {}: {}", path, e.what()), false);
    }
    auto base = std::filesystem::path(path).parent_path();
    try {
        std::string ctx_name =
            context.empty() ? root["current-context"].as<std::string>("") : context;
        YAML::Node ctx = find_named(root["contexts"], ctx_name, "context");
        if (!ctx) {
            return make_error("ConfigError",
                              fmt::format("context \"{}\" not found in {}", ctx_name, path), false);
        }
        YAML::Node cluster =
            find_named(root["clusters"], ctx["cluster"].as<std::string>(""), "cluster");
        YAML::Node user = find_named(root["users"], ctx["user"].as<std::string>(""), "user");
        if (!cluster || !cluster["server"]) {
            return make_error("ConfigError",
                              fmt::format("cluster of context \"{}\" has no server", ctx_name),
                              false);
        }
        config c;
        c.server = cluster["server"].as<std::string>();
        c.insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"].as<bool>(false);
        c.namespace_ = ctx["namespace"].as<std::string>("default");
        SPOOL_OP_TRY_ASSIGN(c.ca_pem, data_or_file(cluster, "certificate-authority", base));
        if (user) {
            SPOOL_OP_TRY_ASSIGN(c.client_cert_pem, data_or_file(user, "client-certificate", base));
            SPOOL_OP_TRY_ASSIGN(c.client_key_pem, data_or_file(user, "client-key", base));
            c.token = user["token"].as<std::string>("");
            if (user["tokenFile"]) {
                std::filesystem::path p = user["tokenFile"].as<std::string>();
                c.token_file = (p.is_absolute() ? p : base / p).string();
            }
        }
        return c;
    } catch (const YAML::Exception& e) {
        return make_error("ConfigError", fmt::format("invalid kubeconfig {}: {}", path, e.what()),
                          false);
    }
}

result<config> load_in_cluster(const std::string& root) {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !port) {
        return make_error("ConfigError",
                          "not running in a pod: KUBERNETES_SERVICE_HOST/PORT are unset", false);
    }
    config c;
    std::string h = host;
    // IPv6 service addresses need brackets in a URL.
    c.server =
        fmt::format("https://{}:{}", h.find(':') != std::string::npos ? "[" + h + "]" : h, port);
    c.token_file = root + "/token";
    SPOOL_OP_TRY_ASSIGN(c.token, read_file(c.token_file));
    SPOOL_OP_TRY_ASSIGN(c.ca_pem, read_file(root + "/ca.crt"));
    auto ns = read_file(root + "/namespace");
    c.namespace_ = ns ? ns.value() : "default";
    return c;
}

}  // namespace spool::op::kube
