#include "operator/reconcilers/kafka_admin.h"

#include "operator/reconcilers/kafka_user_calls.h"

#include "protocol/api/framing.h"
#include "protocol/errors.h"
#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/create_partitions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/describe_configs.h"
#include "protocol/messages/elect_leaders.h"
#include "protocol/messages/incremental_alter_configs.h"
#include "protocol/messages/list_partition_reassignments.h"
#include "protocol/messages/metadata.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <thread>

namespace spool::op::reconcilers {

namespace {

namespace asio = boost::asio;
namespace proto = spool::protocol;
using tcp = asio::ip::tcp;

constexpr int8_t topic_resource = 2;  // ConfigResource.Type TOPIC

error unreachable(const std::string& what) {
    return make_error("BrokersUnreachable", what);
}

// Kafka error code -> op::error with Kafka's name, so status shows e.g. "INVALID_CONFIG: ...".
error kafka_error(int16_t code, const std::optional<std::string>& message,
                  const std::string& what) {
    auto e = static_cast<proto::error_code>(code);
    bool known = proto::is_known_error_code(code);
    std::string name = known ? std::string(proto::name(e)) : fmt::format("error {}", code);
    std::string text = fmt::format("{}: {}", what, name);
    if (message && !message->empty()) {
        text += " (" + *message + ")";
    }
    // Invalid input (INVALID_TOPIC_EXCEPTION 17, INVALID_PARTITIONS 37, INVALID_REPLICATION_FACTOR
    // 38, INVALID_CONFIG 40, INVALID_REQUEST 42) stays invalid; anything else may clear up, and
    // the reconciler's backoff keeps retries cheap.
    bool terminal = code == 17 || code == 37 || code == 38 || code == 40 || code == 42;
    return error{0, "AdminError", text, !terminal};
}

std::pair<std::string, std::string> split_host_port(const std::string& address) {
    auto colon = address.rfind(':');
    if (colon == std::string::npos) {
        return {address, "9092"};
    }
    std::string host = address.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    return {host, address.substr(colon + 1)};
}

// One connection to one broker. Not thread-safe; owned by one kafka_admin.
class connection {
public:
    connection(std::chrono::milliseconds timeout, const client_tls* tls)
        : _timeout(timeout), _socket(_io) {
        if (tls) {
            _tls = *tls;
        }
    }

    result<void> open(const std::string& address) {
        auto [host, port] = split_host_port(address);
        boost::system::error_code ec;
        tcp::resolver resolver(_io);
        auto endpoints = resolver.resolve(host, port, ec);
        if (ec) {
            return unreachable(fmt::format("resolve {}: {}", address, ec.message()));
        }
        bool done = false;
        asio::async_connect(_socket, endpoints,
                            [&](const boost::system::error_code& e, const tcp::endpoint&) {
                                ec = e;
                                done = true;
                            });
        _io.run_for(_timeout);
        if (!done) {
            _socket.close();
            return unreachable(fmt::format("connect {}: timed out", address));
        }
        if (ec) {
            return unreachable(fmt::format("connect {}: {}", address, ec.message()));
        }
        timeval tv{static_cast<time_t>(_timeout.count() / 1000),
                   static_cast<suseconds_t>((_timeout.count() % 1000) * 1000)};
        ::setsockopt(_socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(_socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        _address = address;
        if (_tls) {
            if (auto r = handshake(host); !r) {
                return r;
            }
        }
        return negotiate();
    }

    // Sends `req` at the negotiated version and decodes the response.
    template <class Request, class Response>
    result<std::pair<Response, int16_t>> call(const Request& req) {
        auto it = _versions.find(static_cast<int16_t>(Request::api));
        if (it == _versions.end()) {
            return make_error("AdminError",
                              fmt::format("broker {} does not support API {}", _address,
                                          static_cast<int>(Request::api)),
                              false);
        }
        int16_t version = it->second;
        auto r = round_trip<Request, Response>(req, version);
        if (!r) {
            return r.error();
        }
        return std::pair<Response, int16_t>{std::move(r).value(), version};
    }

private:
    // TLS over the connected socket: the broker's certificate must chain to the CA and name
    // `host`; the client certificate authenticates the operator.
    result<void> handshake(const std::string& host) {
        try {
            _ssl_ctx.emplace(asio::ssl::context::tls_client);
            _ssl_ctx->add_certificate_authority(asio::buffer(_tls->ca_pem));
            _ssl_ctx->use_certificate_chain(asio::buffer(_tls->cert_pem));
            _ssl_ctx->use_private_key(asio::buffer(_tls->key_pem), asio::ssl::context::pem);
            _ssl_ctx->set_verify_mode(asio::ssl::verify_peer);
        } catch (const boost::system::system_error& e) {
            return make_error("CertificateError",
                              fmt::format("TLS client certificate for {}: {}", _address,
                                          e.what()),
                              false);
        }
        _ssl = std::make_unique<asio::ssl::stream<tcp::socket&>>(_socket, *_ssl_ctx);
        _ssl->set_verify_callback(asio::ssl::host_name_verification(host));
        SSL_set_tlsext_host_name(_ssl->native_handle(), host.c_str());
        boost::system::error_code ec;
        _ssl->handshake(asio::ssl::stream_base::client, ec);
        if (ec) {
            return unreachable(fmt::format("TLS handshake with {}: {}", _address, ec.message()));
        }
        return ok();
    }

    void write_all(const std::vector<uint8_t>& bytes, boost::system::error_code& ec) {
        if (_ssl) {
            asio::write(*_ssl, asio::buffer(bytes), ec);
        } else {
            asio::write(_socket, asio::buffer(bytes), ec);
        }
    }

    template <class Buffer>
    void read_all(const Buffer& buffer, boost::system::error_code& ec) {
        if (_ssl) {
            asio::read(*_ssl, buffer, ec);
        } else {
            asio::read(_socket, buffer, ec);
        }
    }

    result<void> negotiate() {
        proto::api_versions_request req;
        req.client_software_name = "spool-operator";
        req.client_software_version = "0.1.0";
        // v0 first: every broker answers it, and its response header is v0 at every version.
        auto r = round_trip<proto::api_versions_request, proto::api_versions_response>(req, 0);
        if (!r) {
            return r.error();
        }
        if (r.value().error_code != 0) {
            return kafka_error(r.value().error_code, std::nullopt, "ApiVersions");
        }
        // The APIs the admin client sends; our version range for each comes from the codec's
        // supported-API table, so it cannot drift from what the codec can encode.
        auto ours = [](int16_t key) -> std::pair<int16_t, int16_t> {
            constexpr proto::api_key used[] = {proto::api_key::metadata,
                                               proto::api_key::create_topics,
                                               proto::api_key::create_partitions,
                                               proto::api_key::incremental_alter_configs,
                                               proto::api_key::delete_topics,
                                               proto::api_key::describe_configs,
                                               proto::api_key::alter_partition_reassignments,
                                               proto::api_key::list_partition_reassignments,
                                               proto::api_key::elect_leaders,
                                               proto::api_key::describe_user_scram_credentials,
                                               proto::api_key::alter_user_scram_credentials,
                                               proto::api_key::describe_acls,
                                               proto::api_key::create_acls,
                                               proto::api_key::delete_acls};
            const auto* info = proto::find_api(key);
            if (info == nullptr ||
                std::find(std::begin(used), std::end(used), info->key) == std::end(used)) {
                return {1, 0};  // not used by the admin client
            }
            return {info->min_version, info->max_version};
        };
        for (const auto& k : r.value().api_keys) {
            auto [lo, hi] = ours(k.api_key);
            int16_t v = std::min(hi, k.max_version);
            if (v >= std::max(lo, k.min_version)) {
                _versions[k.api_key] = v;
            }
        }
        return ok();
    }

    template <class Request, class Response>
    result<Response> round_trip(const Request& req, int16_t version) {
        int32_t correlation = ++_correlation;
        auto frame =
            proto::encode_request(correlation, std::string("spool-operator"), version, req);
        boost::system::error_code ec;
        write_all(frame, ec);
        if (ec) {
            return unreachable(fmt::format("send to {}: {}", _address, ec.message()));
        }
        uint8_t size_bytes[4];
        read_all(asio::buffer(size_bytes), ec);
        if (ec) {
            return unreachable(fmt::format("read from {}: {}", _address, ec.message()));
        }
        uint32_t size = (uint32_t{size_bytes[0]} << 24) | (uint32_t{size_bytes[1]} << 16) |
                        (uint32_t{size_bytes[2]} << 8) | uint32_t{size_bytes[3]};
        if (size > (64u << 20)) {
            return unreachable(fmt::format("{} sent a {} byte response", _address, size));
        }
        std::vector<uint8_t> body(size);
        read_all(asio::buffer(body), ec);
        if (ec) {
            return unreachable(fmt::format("read from {}: {}", _address, ec.message()));
        }
        proto::wire::reader r(body);
        proto::response_header header;
        if (!header.decode(r, proto::response_header_version(Request::api, version)) ||
            header.correlation_id != correlation) {
            return unreachable(
                fmt::format("{} sent a malformed or mismatched response header", _address));
        }
        Response out;
        if (!out.decode(r, version)) {
            return unreachable(fmt::format("{} sent a malformed response", _address));
        }
        return out;
    }

    std::chrono::milliseconds _timeout;
    asio::io_context _io;
    tcp::socket _socket;
    std::optional<client_tls> _tls;
    std::optional<asio::ssl::context> _ssl_ctx;
    std::unique_ptr<asio::ssl::stream<tcp::socket&>> _ssl;
    std::string _address;
    int32_t _correlation = 0;
    std::map<int16_t, int16_t> _versions;
};

class kafka_admin final : public admin_client {
public:
    kafka_admin(std::unique_ptr<connection> bootstrap, std::chrono::milliseconds timeout,
                const client_tls* tls)
        : _bootstrap(std::move(bootstrap)), _timeout(timeout) {
        if (tls) {
            _tls = *tls;
        }
    }

    result<std::optional<topic_description>> describe_topic(const std::string& name) override {
        proto::metadata_request req;
        proto::metadata_request::metadata_request_topic t;
        t.name = name;
        req.topics = std::vector{t};
        req.allow_auto_topic_creation = false;
        auto r = _bootstrap->call<proto::metadata_request, proto::metadata_response>(req);
        if (!r) {
            return r.error();
        }
        const auto& md = r.value().first;
        _controller_address.clear();
        for (const auto& b : md.brokers) {
            if (b.node_id == md.controller_id) {
                _controller_address = fmt::format("{}:{}", b.host, b.port);
            }
        }
        for (const auto& topic : md.topics) {
            if (topic.name != name) {
                continue;
            }
            if (topic.error_code == 3) {  // UNKNOWN_TOPIC_OR_PARTITION
                return std::optional<topic_description>();
            }
            if (topic.error_code != 0) {
                return kafka_error(topic.error_code, std::nullopt, "describe topic " + name);
            }
            topic_description d;
            d.topic_id = topic.topic_id.is_zero() ? "" : topic.topic_id.to_string();
            d.partitions = static_cast<int32_t>(topic.partitions.size());
            d.replication_factor =
                topic.partitions.empty()
                    ? 0
                    : static_cast<int32_t>(topic.partitions.front().replica_nodes.size());
            return std::optional(d);
        }
        return std::optional<topic_description>();
    }

    result<topic_description> create_topic(
        const std::string& name, int32_t partitions, int32_t replication_factor,
        const std::vector<std::pair<std::string, std::string>>& configs) override {
        proto::create_topics_request req;
        proto::create_topics_request::creatable_topic t;
        t.name = name;
        t.num_partitions = partitions;
        t.replication_factor = static_cast<int16_t>(replication_factor);
        for (const auto& [k, v] : configs) {
            proto::create_topics_request::creatable_topic::creatable_topic_config c;
            c.name = k;
            c.value = v;
            t.configs.push_back(std::move(c));
        }
        req.topics.push_back(std::move(t));
        req.timeout_ms = static_cast<int32_t>(_timeout.count());
        auto conn = controller();
        if (!conn) {
            return conn.error();
        }
        auto r =
            conn.value()->call<proto::create_topics_request, proto::create_topics_response>(req);
        if (!r) {
            return r.error();
        }
        topic_description created{"", partitions, replication_factor};
        bool complete = false;
        for (const auto& res : r.value().first.topics) {
            if (res.error_code != 0 && res.error_code != 36) {  // 36: TOPIC_ALREADY_EXISTS
                return kafka_error(res.error_code, res.error_message, "create topic " + name);
            }
            // v5+ answers with the partition count and replication factor, v7+ with the id.
            if (res.error_code == 0 && res.num_partitions >= 0 && !res.topic_id.is_zero()) {
                created = {res.topic_id.to_string(), res.num_partitions, res.replication_factor};
                complete = true;
            }
        }
        if (complete) {
            return created;
        }
        // Older versions, or the topic existed: read it back. Brokers apply metadata
        // asynchronously, so a just-created topic may take a moment to show up.
        for (int attempt = 0; attempt < 10; ++attempt) {
            auto described = describe_topic(name);
            if (!described) {
                return described.error();
            }
            if (described.value()) {
                return *described.value();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return created;  // without an id; the next pass (resync) reads it
    }

    result<void> create_partitions(const std::string& name, int32_t total) override {
        proto::create_partitions_request req;
        proto::create_partitions_request::create_partitions_topic t;
        t.name = name;
        t.count = total;
        t.assignments = std::nullopt;
        req.topics.push_back(std::move(t));
        req.timeout_ms = static_cast<int32_t>(_timeout.count());
        auto conn = controller();
        if (!conn) {
            return conn.error();
        }
        auto r =
            conn.value()->call<proto::create_partitions_request, proto::create_partitions_response>(
                req);
        if (!r) {
            return r.error();
        }
        for (const auto& res : r.value().first.results) {
            if (res.error_code != 0) {
                return kafka_error(res.error_code, res.error_message,
                                   fmt::format("grow {} to {} partitions", name, total));
            }
        }
        return ok();
    }

    result<void> alter_configs(const std::string& name,
                               const std::vector<config_change>& changes) override {
        using resource = proto::incremental_alter_configs_request::alter_configs_resource;
        proto::incremental_alter_configs_request req;
        resource res;
        res.resource_type = topic_resource;
        res.resource_name = name;
        for (const auto& c : changes) {
            resource::alterable_config a;
            a.name = c.key;
            a.config_operation = c.operation == config_change::op::set ? 0 : 1;  // SET, DELETE
            a.value = c.operation == config_change::op::set ? std::optional(c.value) : std::nullopt;
            res.configs.push_back(std::move(a));
        }
        req.resources.push_back(std::move(res));
        auto conn = controller();
        if (!conn) {
            return conn.error();
        }
        auto r = conn.value()
                     ->call<proto::incremental_alter_configs_request,
                            proto::incremental_alter_configs_response>(req);
        if (!r) {
            return r.error();
        }
        for (const auto& resp : r.value().first.responses) {
            if (resp.error_code != 0) {
                return kafka_error(resp.error_code, resp.error_message, "alter configs of " + name);
            }
        }
        return ok();
    }

    result<topic_configs> describe_topic_configs(const std::string& name) override {
        proto::describe_configs_request req;
        proto::describe_configs_request::describe_configs_resource res;
        res.resource_type = topic_resource;
        res.resource_name = name;
        res.configuration_keys = std::nullopt;  // all of them
        req.resources.push_back(std::move(res));
        // Topic configs are served by any broker: no need to find the controller.
        auto r =
            _bootstrap->call<proto::describe_configs_request, proto::describe_configs_response>(
                req);
        if (!r) {
            return r.error();
        }
        constexpr int8_t dynamic_topic_config = 1;  // DescribeConfigsResponse ConfigSource
        topic_configs out;
        for (const auto& result : r.value().first.results) {
            if (result.error_code != 0) {
                return kafka_error(result.error_code, result.error_message,
                                   "describe configs of " + name);
            }
            for (const auto& c : result.configs) {
                // v0 has no source, only IsDefault; a non-default topic config there is an
                // override.
                bool topic_override =
                    r.value().second >= 1 ? c.config_source == dynamic_topic_config : !c.is_default;
                out[c.name] = {c.value.value_or(""), topic_override};
            }
        }
        return out;
    }

    result<void> delete_topic(const std::string& name) override {
        proto::delete_topics_request req;
        req.topic_names.push_back(name);  // v0-5
        proto::delete_topics_request::delete_topic_state state;
        state.name = name;
        req.topics.push_back(state);  // v6+
        req.timeout_ms = static_cast<int32_t>(_timeout.count());
        auto conn = controller();
        if (!conn) {
            return conn.error();
        }
        auto r =
            conn.value()->call<proto::delete_topics_request, proto::delete_topics_response>(req);
        if (!r) {
            return r.error();
        }
        for (const auto& res : r.value().first.responses) {
            if (res.error_code != 0 && res.error_code != 3) {  // already gone is fine
                return kafka_error(res.error_code, res.error_message, "delete topic " + name);
            }
        }
        return ok();
    }

    result<cluster_placement> describe_placement() override {
        proto::metadata_request req;
        req.topics = std::nullopt;  // all topics
        req.allow_auto_topic_creation = false;
        auto r = _bootstrap->call<proto::metadata_request, proto::metadata_response>(req);
        if (!r) {
            return r.error();
        }
        const auto& md = r.value().first;
        cluster_placement out;
        for (const auto& b : md.brokers) {
            out.brokers.push_back(b.node_id);
        }
        for (const auto& topic : md.topics) {
            if (topic.error_code == 3) {  // UNKNOWN_TOPIC_OR_PARTITION: deleted meanwhile
                continue;
            }
            if (topic.error_code != 0 && topic.partitions.empty()) {
                // A topic being created: where it will live is unknown, so nothing about the
                // brokers can be called safe yet.
                return kafka_error(topic.error_code, std::nullopt,
                                   "describe placement of " + topic.name.value_or("?"));
            }
            for (const auto& p : topic.partitions) {
                out.partitions.push_back(
                    {topic.name.value_or(""), p.partition_index, p.leader_id, p.replica_nodes});
            }
        }
        return out;
    }

    result<void> alter_reassignments(const std::vector<partition_move>& moves,
                                     replica_count count) override {
        using request = proto::alter_partition_reassignments_request;
        request req;
        req.timeout_ms = static_cast<int32_t>(_timeout.count());
        req.allow_replication_factor_change = count == replica_count::may_change;
        std::map<std::string, request::reassignable_topic> by_topic;
        for (const auto& m : moves) {
            auto& t = by_topic[m.topic];
            t.name = m.topic;
            request::reassignable_topic::reassignable_partition p;
            p.partition_index = m.partition;
            p.replicas = m.replicas;
            t.partitions.push_back(std::move(p));
        }
        for (auto& [name, t] : by_topic) {
            req.topics.push_back(std::move(t));
        }
        auto r = _bootstrap->call<request, proto::alter_partition_reassignments_response>(req);
        if (!r) {
            return r.error();
        }
        const auto& resp = r.value().first;
        if (resp.error_code != 0) {
            return kafka_error(resp.error_code, resp.error_message, "reassign partitions");
        }
        for (const auto& t : resp.responses) {
            for (const auto& p : t.partitions) {
                if (p.error_code != 0) {
                    return kafka_error(p.error_code, p.error_message,
                                       fmt::format("reassign {}-{}", t.name, p.partition_index));
                }
            }
        }
        return ok();
    }

    result<std::vector<partition_move>> list_reassignments() override {
        proto::list_partition_reassignments_request req;
        req.timeout_ms = static_cast<int32_t>(_timeout.count());
        req.topics = std::nullopt;  // every reassignment under way
        auto r = _bootstrap->call<proto::list_partition_reassignments_request,
                                  proto::list_partition_reassignments_response>(req);
        if (!r) {
            return r.error();
        }
        const auto& resp = r.value().first;
        if (resp.error_code != 0) {
            return kafka_error(resp.error_code, resp.error_message, "list reassignments");
        }
        std::vector<partition_move> out;
        for (const auto& t : resp.topics) {
            for (const auto& p : t.partitions) {
                out.push_back({t.name, p.partition_index, p.replicas});
            }
        }
        return out;
    }

    result<std::vector<std::string>> elect_preferred_leaders() override {
        proto::elect_leaders_request req;
        req.election_type = 0;                // PREFERRED
        req.topic_partitions = std::nullopt;  // every partition
        req.timeout_ms = static_cast<int32_t>(_timeout.count());
        auto r = _bootstrap->call<proto::elect_leaders_request, proto::elect_leaders_response>(req);
        if (!r) {
            return r.error();
        }
        const auto& resp = r.value().first;
        if (resp.error_code != 0) {
            return kafka_error(resp.error_code, std::nullopt, "elect preferred leaders");
        }
        std::vector<std::string> failed;
        for (const auto& t : resp.replica_election_results) {
            for (const auto& p : t.partition_result) {
                if (p.error_code == 0 ||
                    p.error_code == static_cast<int16_t>(proto::error_code::election_not_needed)) {
                    continue;
                }
                auto e = static_cast<proto::error_code>(p.error_code);
                failed.push_back(fmt::format("{}-{}: {}", t.topic, p.partition_id,
                                             proto::is_known_error_code(p.error_code)
                                                 ? std::string(proto::name(e))
                                                 : std::to_string(p.error_code)));
            }
        }
        return failed;
    }

private:
    // The controller's connection (opened on first use), or the bootstrap one.
    result<connection*> controller() {
        if (_controller) {
            return _controller.get();
        }
        if (_controller_address.empty()) {
            // Metadata names the controller; ask once.
            proto::metadata_request req;
            req.topics = std::vector<proto::metadata_request::metadata_request_topic>{};
            auto r = _bootstrap->call<proto::metadata_request, proto::metadata_response>(req);
            if (!r) {
                return r.error();
            }
            for (const auto& b : r.value().first.brokers) {
                if (b.node_id == r.value().first.controller_id) {
                    _controller_address = fmt::format("{}:{}", b.host, b.port);
                }
            }
        }
        if (_controller_address.empty()) {
            return _bootstrap.get();
        }
        auto conn = std::make_unique<connection>(_timeout, _tls ? &*_tls : nullptr);
        if (auto r = conn->open(_controller_address); !r) {
            // The advertised address may not resolve from where the operator runs (tests,
            // out-of-cluster): the bootstrap broker forwards or answers NOT_CONTROLLER.
            return _bootstrap.get();
        }
        _controller = std::move(conn);
        return _controller.get();
    }

public:
    // Users and ACLs: kafka_user_calls.h, on the bootstrap connection.
    result<std::vector<int8_t>> describe_scram(const std::string& user) override {
        return user_calls::describe_scram(*_bootstrap, kafka_error, user);
    }
    result<void> upsert_scram(const scram_upsert& credential) override {
        return user_calls::upsert_scram(*_bootstrap, kafka_error, credential);
    }
    result<void> delete_scram(const std::string& user, int8_t mechanism) override {
        return user_calls::delete_scram(*_bootstrap, kafka_error, user, mechanism);
    }
    result<std::vector<acl_binding>> describe_acls(const std::string& principal) override {
        return user_calls::describe_acls(*_bootstrap, kafka_error, principal);
    }
    result<void> create_acls(const std::vector<acl_binding>& bindings) override {
        return user_calls::create_acls(*_bootstrap, kafka_error, bindings);
    }
    result<void> delete_acls(const std::vector<acl_binding>& bindings) override {
        return user_calls::delete_acls(*_bootstrap, kafka_error, bindings);
    }

private:
    std::unique_ptr<connection> _bootstrap;
    std::unique_ptr<connection> _controller;
    std::string _controller_address;
    std::chrono::milliseconds _timeout;
    std::optional<client_tls> _tls;
};

class kafka_admin_factory final : public admin_client_factory {
public:
    explicit kafka_admin_factory(std::chrono::milliseconds timeout) : _timeout(timeout) {}

    result<std::unique_ptr<admin_client>> connect(const std::string& bootstrap,
                                                  const client_tls* tls) override {
        auto conn = std::make_unique<connection>(_timeout, tls);
        if (auto r = conn->open(bootstrap); !r) {
            return r.error();
        }
        return std::unique_ptr<admin_client>(
            std::make_unique<kafka_admin>(std::move(conn), _timeout, tls));
    }

private:
    std::chrono::milliseconds _timeout;
};

}  // namespace

std::unique_ptr<admin_client_factory> make_kafka_admin_factory(std::chrono::milliseconds timeout) {
    return std::make_unique<kafka_admin_factory>(timeout);
}

}  // namespace spool::op::reconcilers
