#include "operator/reconcilers/broker_health.h"

#include "operator/api/json.h"  // first: defines _TURN_OFF_PLATFORM_STRING for cpprestsdk

#include <cpprest/http_client.h>
#include <fmt/format.h>

namespace spool::op::reconcilers {

namespace {

class http_broker_health final : public broker_health {
public:
    result<restart_verdict> restart_safe(const std::string& host, int port,
                                         int broker_id) override {
        std::string url = fmt::format("http://{}:{}", host, port);
        std::string path = fmt::format("/v1/brokers/{}/restart-safe", broker_id);
        try {
            web::http::client::http_client_config cc;
            cc.set_timeout(std::chrono::seconds(5));
            web::http::client::http_client client(url, cc);
            auto resp = client.request(web::http::methods::GET, path).get();
            std::string body = resp.extract_utf8string(true).get();
            if (resp.status_code() != 200) {
                return make_error("BrokersUnreachable",
                                  fmt::format("{}{} answered HTTP {}: {}", url, path,
                                              resp.status_code(), body.substr(0, 256)));
            }
            auto parsed = parse_json(body);
            if (!parsed || !parsed->is_object()) {
                return make_error("BrokersUnreachable",
                                  fmt::format("{}{} answered invalid JSON", url, path));
            }
            return restart_verdict{get_bool(*parsed, "restart_safe"),
                                   get_string(*parsed, "summary")};
        } catch (const std::exception& e) {
            return make_error("BrokersUnreachable", fmt::format("{}{}: {}", url, path, e.what()));
        }
    }
};

}  // namespace

std::unique_ptr<broker_health> make_http_broker_health() {
    return std::make_unique<http_broker_health>();
}

}  // namespace spool::op::reconcilers
