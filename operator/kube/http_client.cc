#include "operator/kube/http_client.h"

#include "common/log.h"
#include "operator/api/json.h"  // first: defines _TURN_OFF_PLATFORM_STRING for cpprestsdk
#include "operator/api/meta.h"
#include "operator/kube/backoff.h"

#include <boost/asio/ssl.hpp>
#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>
#include <cpprest/uri_builder.h>
#include <fmt/format.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace spool::op::kube {

namespace http = web::http;
namespace hc = web::http::client;

namespace {

constexpr int max_attempts = 4;
constexpr auto request_timeout = std::chrono::seconds(30);

bool retryable(int status) {
    return status == 0 || status == 429 || status == 500 || status == 502 || status == 503 ||
           status == 504;
}

// Turns a non-2xx answer into an op::error using the API server's Status object when present.
error api_error(int status, const std::string& body) {
    error e;
    e.http_status = status;
    e.transient = retryable(status) || status == 409;
    auto parsed = parse_json(body);
    if (parsed && parsed->is_object()) {
        e.reason = get_string(*parsed, "reason");
        e.message = get_string(*parsed, "message");
    }
    if (e.reason.empty()) {
        e.reason = status == 403 ? "Forbidden" : status == 404 ? "NotFound" : "ApiError";
    }
    if (e.message.empty()) {
        e.message = fmt::format("HTTP {}: {}", status, body.substr(0, 512));
    }
    return e;
}

std::string read_text_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
        s.pop_back();
    }
    return s;
}

}  // namespace

struct http_client::impl {
    config cfg;
    std::unique_ptr<hc::http_client> requests;
    std::unique_ptr<hc::http_client> watches;
    pplx::cancellation_token_source cancel_source;
    std::atomic<bool> cancelled{false};

    explicit impl(config c) : cfg(std::move(c)) {
        requests = std::make_unique<hc::http_client>(cfg.server, client_config(request_timeout));
        // Inactivity timeout for watches: longer than the server's own watch timeout plus the
        // bookmark interval, so a silent but healthy watch is not cut.
        watches =
            std::make_unique<hc::http_client>(cfg.server, client_config(std::chrono::seconds(330)));
    }

    hc::http_client_config client_config(std::chrono::seconds timeout) const {
        hc::http_client_config cc;
        cc.set_timeout(timeout);
        cc.set_validate_certificates(!cfg.insecure_skip_tls_verify);
        std::string ca = cfg.ca_pem, cert = cfg.client_cert_pem, key = cfg.client_key_pem;
        cc.set_ssl_context_callback([ca, cert, key](boost::asio::ssl::context& ctx) {
            if (!ca.empty()) {
                ctx.add_certificate_authority(boost::asio::buffer(ca.data(), ca.size()));
            }
            if (!cert.empty() && !key.empty()) {
                ctx.use_certificate_chain(boost::asio::buffer(cert.data(), cert.size()));
                ctx.use_private_key(boost::asio::buffer(key.data(), key.size()),
                                    boost::asio::ssl::context::pem);
            }
        });
        return cc;
    }

    std::string bearer() const {
        // Bound service-account tokens rotate: read the file each time (it is tiny and cached
        // by the kernel).
        std::string token = cfg.token_file.empty() ? cfg.token : read_text_file(cfg.token_file);
        return token.empty() ? std::string() : "Bearer " + token;
    }

    http::http_request make_request(const http::method& method, const std::string& path_query,
                                    const std::string* body, const char* content_type) const {
        http::http_request req(method);
        req.set_request_uri(path_query);
        req.headers().add("Accept", "application/json");
        req.headers().add("User-Agent", "spool-operator");
        if (auto b = bearer(); !b.empty()) {
            req.headers().add("Authorization", b);
        }
        if (body) {
            req.set_body(*body, content_type);
        }
        return req;
    }

    result<std::string> call_once(const http::method& method, const std::string& path_query,
                                  const std::string* body, const char* content_type) {
        if (cancelled) {
            return make_error("Cancelled", "client is shutting down", false);
        }
        try {
            auto resp = requests
                            ->request(make_request(method, path_query, body, content_type),
                                      cancel_source.get_token())
                            .get();
            std::string text = resp.extract_utf8string(true).get();
            int status = resp.status_code();
            if (status >= 200 && status < 300) {
                return text;
            }
            return api_error(status, text);
        } catch (const std::exception& e) {
            return error{0, "Unreachable",
                         fmt::format("{} {}: {}", method, cfg.server + path_query, e.what()), true};
        }
    }

    result<std::string> call(const http::method& method, const std::string& path_query,
                             const std::string* body = nullptr,
                             const char* content_type = "application/json") {
        backoff delays(std::chrono::milliseconds(100), std::chrono::milliseconds(2000));
        for (int attempt = 1;; ++attempt) {
            auto r = call_once(method, path_query, body, content_type);
            if (r || !retryable(r.error().http_status) || attempt == max_attempts || cancelled) {
                return r;
            }
            auto d = delays.next();
            log::get("kube")->debug("{} {} failed ({}), retry {} in {} ms", method, path_query,
                                    r.error().message, attempt, d.count());
            std::this_thread::sleep_for(d);
        }
    }

    result<json> call_json(const http::method& method, const std::string& path_query,
                           const std::string* body = nullptr,
                           const char* content_type = "application/json") {
        auto r = call(method, path_query, body, content_type);
        if (!r) {
            return std::move(r).error();
        }
        auto parsed = parse_json(r.value());
        if (!parsed) {
            return make_error("BadResponse", "API server answered with invalid JSON");
        }
        return std::move(*parsed);
    }
};

http_client::http_client(config cfg) : _impl(std::make_unique<impl>(std::move(cfg))) {}
http_client::~http_client() = default;

void http_client::cancel() {
    _impl->cancelled = true;
    _impl->cancel_source.cancel();
}

result<json> http_client::get(const resource_kind& kind, std::string_view ns,
                              std::string_view name) {
    return _impl->call_json(http::methods::GET, kind.object_path(ns, name));
}

result<list_result> http_client::list(const resource_kind& kind, std::string_view ns,
                                      const list_options& options) {
    web::uri_builder b(kind.collection_path(ns));
    if (!options.label_selector.empty()) {
        b.append_query("labelSelector", options.label_selector);
    }
    if (!options.field_selector.empty()) {
        b.append_query("fieldSelector", options.field_selector);
    }
    auto r = _impl->call_json(http::methods::GET, b.to_string());
    if (!r) {
        return std::move(r).error();
    }
    list_result out;
    const json& v = r.value();
    if (const json* meta = find(v, "metadata")) {
        out.resource_version = get_string(*meta, "resourceVersion");
    }
    if (const json* items = find(v, "items")) {
        for (const auto& item : items->as_array()) {
            out.items.push_back(item);
        }
    }
    return out;
}

result<std::string> http_client::watch(const resource_kind& kind, std::string_view ns,
                                       const list_options& options,
                                       const std::string& resource_version, int timeout_seconds,
                                       const std::function<bool(const watch_event&)>& on_event) {
    web::uri_builder b(kind.collection_path(ns));
    b.append_query("watch", "true");
    b.append_query("allowWatchBookmarks", "true");
    b.append_query("timeoutSeconds", std::to_string(timeout_seconds));
    if (!resource_version.empty()) {
        b.append_query("resourceVersion", resource_version);
    } else if (options.send_initial_events) {
        b.append_query("sendInitialEvents", "true");
        b.append_query("resourceVersionMatch", "NotOlderThan");
    }
    if (!options.label_selector.empty()) {
        b.append_query("labelSelector", options.label_selector);
    }
    if (!options.field_selector.empty()) {
        b.append_query("fieldSelector", options.field_selector);
    }
    std::string last = resource_version;
    if (_impl->cancelled) {
        return make_error("Cancelled", "client is shutting down", false);
    }
    try {
        auto resp =
            _impl->watches
                ->request(_impl->make_request(http::methods::GET, b.to_string(), nullptr, nullptr),
                          _impl->cancel_source.get_token())
                .get();
        if (resp.status_code() != 200) {
            return api_error(resp.status_code(), resp.extract_utf8string(true).get());
        }
        auto body = resp.body();
        for (;;) {
            concurrency::streams::container_buffer<std::string> line;
            size_t n = body.read_line(line).get();
            if (n == 0) {
                if (body.is_eof()) {
                    return last;  // the server ended the watch (timeoutSeconds)
                }
                continue;
            }
            auto parsed = parse_json(line.collection());
            if (!parsed) {
                return make_error("BadResponse", "invalid JSON line in watch stream");
            }
            std::string type = get_string(*parsed, "type");
            const json* object = find(*parsed, "object");
            if (!object) {
                continue;
            }
            if (type == "ERROR") {
                return api_error(static_cast<int>(get_int(*object, "code", 500)),
                                 object->serialize());
            }
            if (const json* meta = find(*object, "metadata")) {
                last = get_string(*meta, "resourceVersion", last);
            }
            event_type t = type == "ADDED"      ? event_type::added
                           : type == "MODIFIED" ? event_type::modified
                           : type == "DELETED"  ? event_type::deleted
                                                : event_type::bookmark;
            if (!on_event(watch_event{t, *object})) {
                return last;
            }
        }
    } catch (const std::exception& e) {
        return error{0, "Unreachable", fmt::format("watch {}: {}", kind.plural, e.what()), true};
    }
}

result<json> http_client::apply(const resource_kind& kind, std::string_view ns,
                                std::string_view name, const json& object, bool force) {
    web::uri_builder b(kind.object_path(ns, name));
    b.append_query("fieldManager", api::field_manager);
    if (force) {
        b.append_query("force", "true");
    }
    // JSON is YAML, so the manifest goes as is.
    std::string body = object.serialize();
    return _impl->call_json(http::methods::PATCH, b.to_string(), &body,
                            "application/apply-patch+yaml");
}

result<json> http_client::apply_yaml(const resource_kind& kind, std::string_view ns,
                                     std::string_view name, const std::string& yaml) {
    web::uri_builder b(kind.object_path(ns, name));
    b.append_query("fieldManager", api::field_manager);
    b.append_query("force", "true");
    return _impl->call_json(http::methods::PATCH, b.to_string(), &yaml,
                            "application/apply-patch+yaml");
}

result<json> http_client::create(const resource_kind& kind, std::string_view ns,
                                 const json& object) {
    web::uri_builder b(kind.collection_path(ns));
    b.append_query("fieldManager", api::field_manager);
    std::string body = object.serialize();
    return _impl->call_json(http::methods::POST, b.to_string(), &body);
}

result<json> http_client::replace(const resource_kind& kind, std::string_view ns,
                                  std::string_view name, const json& object) {
    web::uri_builder b(kind.object_path(ns, name));
    b.append_query("fieldManager", api::field_manager);
    std::string body = object.serialize();
    return _impl->call_json(http::methods::PUT, b.to_string(), &body);
}

result<json> http_client::replace_status(const resource_kind& kind, std::string_view ns,
                                         std::string_view name, const json& object) {
    web::uri_builder b(kind.object_path(ns, name) + "/status");
    b.append_query("fieldManager", api::field_manager);
    std::string body = object.serialize();
    return _impl->call_json(http::methods::PUT, b.to_string(), &body);
}

result<json> http_client::merge_patch(const resource_kind& kind, std::string_view ns,
                                      std::string_view name, const json& patch) {
    web::uri_builder b(kind.object_path(ns, name));
    b.append_query("fieldManager", api::field_manager);
    std::string body = patch.serialize();
    return _impl->call_json(http::methods::PATCH, b.to_string(), &body,
                            "application/merge-patch+json");
}

result<json> http_client::remove(const resource_kind& kind, std::string_view ns,
                                 std::string_view name, std::string_view uid) {
    return remove(kind, ns, name, delete_options{std::string(uid), {}});
}

result<json> http_client::remove(const resource_kind& kind, std::string_view ns,
                                 std::string_view name, const delete_options& how) {
    json options = obj({{"apiVersion", str("v1")}, {"kind", str("DeleteOptions")}});
    if (!how.uid.empty()) {
        options["preconditions"] = obj({{"uid", str(how.uid)}});
    }
    if (!how.propagation_policy.empty()) {
        options["propagationPolicy"] = str(how.propagation_policy);
    }
    std::string body = options.serialize();
    return _impl->call_json(http::methods::DEL, kind.object_path(ns, name), &body);
}

result<std::string> http_client::get_raw(const std::string& path) {
    return _impl->call(http::methods::GET, path);
}

}  // namespace spool::op::kube
