#include "operator/reconcilers/broker_health.h"

#include "operator/api/json.h"  // first: defines _TURN_OFF_PLATFORM_STRING for cpprestsdk

#include <cpprest/http_client.h>
#include <fmt/format.h>

namespace spool::op::reconcilers {

namespace {

struct http_answer {
    int status = 0;
    std::string body;
};

// One request; transport failures become BrokersUnreachable (http_status 0).
std::string base_url(const std::string& host, int port, const client_tls* tls) {
    return fmt::format("{}://{}:{}", tls ? "https" : "http", host, port);
}

result<http_answer> request(const web::http::method& method, const std::string& host, int port,
                            const std::string& path, const client_tls* tls) {
    std::string url = base_url(host, port, tls);
    try {
        web::http::client::http_client_config cc;
        if (tls) {
            // cpprestsdk verifies the chain and the URL's host name (RFC 2818); the cluster CA
            // is added to the default paths, the client certificate is the operator's.
            client_tls id = *tls;
            cc.set_ssl_context_callback([id](boost::asio::ssl::context& ctx) {
                ctx.add_certificate_authority(boost::asio::buffer(id.ca_pem));
                ctx.use_certificate_chain(boost::asio::buffer(id.cert_pem));
                ctx.use_private_key(boost::asio::buffer(id.key_pem),
                                    boost::asio::ssl::context::pem);
            });
        }
        // POST and DELETE wait for the metadata store's commit on the broker.
        cc.set_timeout(std::chrono::seconds(method == web::http::methods::GET ? 5 : 15));
        web::http::client::http_client client(url, cc);
        auto resp = client.request(method, path).get();
        return http_answer{resp.status_code(), resp.extract_utf8string(true).get()};
    } catch (const std::exception& e) {
        return make_error("BrokersUnreachable", fmt::format("{}{}: {}", url, path, e.what()));
    }
}

// The admin API's error body is {"error": "...", "status": N}.
error http_error(const http_answer& a, const std::string& what) {
    auto parsed = parse_json(a.body);
    std::string text = parsed && parsed->is_object() ? get_string(*parsed, "error") : "";
    if (text.empty()) {
        text = a.body.substr(0, 256);
    }
    bool transient = a.status != 409 && a.status != 400;
    return error{a.status, a.status == 409 ? "NoReplacement" : "BrokersUnreachable",
                 fmt::format("{}: HTTP {}: {}", what, a.status, text), transient};
}

result<drain_progress> parse_progress(const http_answer& a, const std::string& what) {
    auto parsed = parse_json(a.body);
    if (!parsed || !parsed->is_object()) {
        return make_error("BrokersUnreachable", what + ": invalid JSON");
    }
    drain_progress p;
    std::string state = get_string(*parsed, "state");
    p.phase = state == "drained"    ? drain_progress::state::drained
              : state == "draining" ? drain_progress::state::draining
                                    : drain_progress::state::none;
    p.remaining = static_cast<int32_t>(get_int(*parsed, "partitions_remaining"));
    p.moving = static_cast<int32_t>(get_int(*parsed, "partitions_moving"));
    p.done = static_cast<int32_t>(get_int(*parsed, "partitions_done"));
    return p;
}

class http_broker_health final : public broker_health {
public:
    result<restart_verdict> restart_safe(const std::string& host, int port, int broker_id,
                                         const client_tls* tls) override {
        std::string path = fmt::format("/v1/brokers/{}/restart-safe", broker_id);
        auto r = request(web::http::methods::GET, host, port, path, tls);
        if (!r) {
            return r.error();
        }
        std::string what = base_url(host, port, tls) + path;
        if (r.value().status != 200) {
            return make_error("BrokersUnreachable",
                              fmt::format("{} answered HTTP {}: {}", what, r.value().status,
                                          r.value().body.substr(0, 256)));
        }
        auto parsed = parse_json(r.value().body);
        if (!parsed || !parsed->is_object()) {
            return make_error("BrokersUnreachable", what + " answered invalid JSON");
        }
        return restart_verdict{get_bool(*parsed, "restart_safe"), get_string(*parsed, "summary")};
    }

    result<drain_progress> start_decommission(const std::string& host, int port, int broker_id,
                                              const client_tls* tls) override {
        return decommission(web::http::methods::POST, host, port, broker_id, tls);
    }

    result<drain_progress> decommission_status(const std::string& host, int port, int broker_id,
                                               const client_tls* tls) override {
        return decommission(web::http::methods::GET, host, port, broker_id, tls);
    }

    result<drain_progress> cancel_decommission(const std::string& host, int port, int broker_id,
                                               const client_tls* tls) override {
        auto r = decommission(web::http::methods::DEL, host, port, broker_id, tls);
        if (!r && r.error().is_not_found()) {
            return drain_progress{};  // not marked: nothing to cancel
        }
        return r;
    }

private:
    static result<drain_progress> decommission(const web::http::method& method,
                                               const std::string& host, int port, int broker_id,
                                               const client_tls* tls) {
        std::string path = fmt::format("/v1/brokers/{}/decommission", broker_id);
        std::string what = fmt::format("{} {}{}", method, base_url(host, port, tls), path);
        auto r = request(method, host, port, path, tls);
        if (!r) {
            return r.error();
        }
        if (r.value().status != 200 && r.value().status != 202) {
            return http_error(r.value(), what);
        }
        return parse_progress(r.value(), what);
    }
};

}  // namespace

std::unique_ptr<broker_health> make_http_broker_health() {
    return std::make_unique<http_broker_health>();
}

}  // namespace spool::op::reconcilers
