#include "broker/http/admin_api.h"

#include "broker/http/cluster_health.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

namespace spool::broker::http {

namespace {

namespace h = spool::http;
using json = nlohmann::json;

// Enough for any real cluster; a runaway list would make the response itself a problem.
constexpr size_t max_listed = 1000;

json ids(const std::vector<model::node_id>& v) {
    json out = json::array();
    for (auto id : v)
        out.push_back(id.value());
    return out;
}

json refs(const std::vector<partition_ref>& v) {
    json out = json::array();
    for (const auto& r : v) {
        if (out.size() >= max_listed)
            break;
        out.push_back({{"topic", r.topic}, {"partition", r.partition}});
    }
    return out;
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
    std::time_t tt = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

h::response no_cluster() {
    return h::error_response(h::status::service_unavailable,
                             "cluster metadata is not available yet");
}

h::response get_broker(const admin_context& ctx) {
    json listeners = json::array();
    for (const auto& l : ctx.self.listeners) {
        listeners.push_back({{"name", l.name}, {"address", l.address}});
    }
    auto up = std::chrono::system_clock::now() - ctx.self.started_at;
    return h::json_response(h::status::ok,
                            {{"node_id", ctx.self.id.value()},
                             {"version", ctx.self.version},
                             {"listeners", listeners},
                             {"started_at", rfc3339(ctx.self.started_at)},
                             {"uptime_seconds", std::chrono::duration<double>(up).count()}});
}

h::response get_cluster(const admin_context& ctx) {
    if (!ctx.cluster)
        return no_cluster();
    auto s = ctx.cluster->snapshot();
    json brokers = json::array();
    for (const auto& b : s.brokers) {
        json j{{"node_id", b.id.value()}, {"host", b.host}, {"port", b.port}, {"alive", b.alive}};
        j["rack"] = b.rack ? json(*b.rack) : json(nullptr);
        brokers.push_back(std::move(j));
    }
    return h::json_response(
        h::status::ok,
        {{"cluster_id", s.cluster_id},
         {"controller_id", s.controller ? json(s.controller->value()) : json(nullptr)},
         {"brokers", brokers}});
}

h::response get_topics(const admin_context& ctx) {
    if (!ctx.cluster)
        return no_cluster();
    auto s = ctx.cluster->snapshot();
    json topics = json::array();
    for (const auto& t : s.topics) {
        size_t rf = t.partitions.empty() ? 0 : t.partitions.front().replicas.size();
        topics.push_back({{"name", t.name},
                          {"internal", t.internal},
                          {"partitions", t.partitions.size()},
                          {"replication_factor", rf}});
    }
    return h::json_response(h::status::ok, {{"topics", topics}});
}

h::response get_topic(const admin_context& ctx, std::string_view name) {
    if (!ctx.cluster)
        return no_cluster();
    auto s = ctx.cluster->snapshot();
    auto it = std::find_if(s.topics.begin(), s.topics.end(),
                           [&](const topic_info& t) { return t.name == name; });
    if (it == s.topics.end()) {
        return h::error_response(h::status::not_found, "no such topic: " + std::string(name));
    }
    std::map<int32_t, log_info> local;
    if (ctx.logs) {
        for (auto& l : ctx.logs->logs()) {
            if (l.tp.topic == name)
                local.emplace(l.tp.partition.value(), std::move(l));
        }
    }
    json partitions = json::array();
    for (const auto& p : it->partitions) {
        json j{{"partition", p.id.value()},
               {"leader", p.leader ? json(p.leader->value()) : json(nullptr)},
               {"leader_epoch", p.leader_epoch.value()},
               {"replicas", ids(p.replicas)},
               {"isr", ids(p.isr)}};
        if (auto l = local.find(p.id.value()); l != local.end()) {
            j["log"] = {{"log_start_offset", l->second.log_start_offset.value()},
                        {"log_end_offset", l->second.log_end_offset.value()},
                        {"high_watermark", l->second.high_watermark.value()},
                        {"size_bytes", l->second.size_bytes},
                        {"segments", l->second.segment_count}};
        }
        partitions.push_back(std::move(j));
    }
    return h::json_response(h::status::ok, {{"name", it->name},
                                            {"internal", it->internal},
                                            {"min_insync_replicas", it->min_insync_replicas},
                                            {"partitions", partitions}});
}

h::response get_health(const admin_context& ctx) {
    if (!ctx.cluster)
        return no_cluster();
    auto hl = assess_health(ctx.cluster->snapshot());
    return h::json_response(h::status::ok,
                            {{"healthy", hl.healthy},
                             {"partitions", hl.partitions},
                             {"brokers_down", ids(hl.brokers_down)},
                             {"leaderless_partitions", refs(hl.leaderless)},
                             {"offline_partitions", refs(hl.offline)},
                             {"under_replicated_partitions", refs(hl.under_replicated)},
                             {"under_min_isr_partitions", refs(hl.under_min_isr)}});
}

std::optional<model::node_id> parse_node_id(std::string_view text) {
    int32_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || v < 0)
        return std::nullopt;
    return model::node_id{v};
}

std::string restart_summary(const restart_verdict& v) {
    if (v.safe && v.single_broker) {
        return "safe for partition availability (this broker hosts no partitions), but it is "
               "the only broker: clients cannot connect while it restarts";
    }
    if (v.safe)
        return "safe: every partition on this broker keeps enough in-sync replicas";
    if (v.single_broker) {
        return "not safe: this is the only broker, so every partition it hosts is unavailable "
               "while it restarts; no restart of a single-broker cluster can be safe";
    }
    return "not safe: see risks";
}

h::response get_restart_safe(const admin_context& ctx, std::string_view id_text) {
    auto id = parse_node_id(id_text);
    if (!id)
        return h::error_response(h::status::bad_request, "broker id must be an integer >= 0");
    if (!ctx.cluster)
        return no_cluster();
    auto v = assess_restart(ctx.cluster->snapshot(), *id);
    if (!v.known_broker) {
        return h::error_response(h::status::not_found,
                                 "no such broker: " + std::to_string(id->value()));
    }
    json risks = json::array();
    for (const auto& r : v.risks) {
        if (risks.size() >= max_listed)
            break;
        risks.push_back({{"topic", r.partition.topic},
                         {"partition", r.partition.partition},
                         {"reason", r.reason},
                         {"isr_after_restart", r.isr_after},
                         {"min_insync_replicas", r.min_insync_replicas}});
    }
    return h::json_response(h::status::ok, {{"node_id", id->value()},
                                            {"restart_safe", v.safe},
                                            {"single_broker", v.single_broker},
                                            {"partitions_hosted", v.partitions_hosted},
                                            {"partitions_led", v.partitions_led},
                                            {"risk_count", v.risks.size()},
                                            {"risks", risks},
                                            {"summary", restart_summary(v)}});
}

// ---- decommission ----

h::response decommission_status_json(model::node_id id, const decommission_status& st,
                                     h::status code) {
    const bool drained = st.marked && st.partitions_remaining == 0 && st.partitions_moving == 0;
    return h::json_response(code,
                            {{"node_id", id.value()},
                             {"state", !st.marked ? "none" : (drained ? "drained" : "draining")},
                             {"partitions_remaining", st.partitions_remaining},
                             {"partitions_moving", st.partitions_moving},
                             {"partitions_done", st.partitions_done}});
}

h::response decommission_failed(const decommission_control::answer& a, model::node_id id) {
    using outcome = decommission_control::outcome;
    switch (a.result) {
        case outcome::unknown_broker:
            return h::error_response(h::status::not_found,
                                     "no such broker: " + std::to_string(id.value()));
        case outcome::no_replacement:
            return h::error_response(h::status::conflict, a.message);
        case outcome::unavailable:
        case outcome::ok:
            break;
    }
    return h::error_response(h::status::service_unavailable, a.message);
}

enum class decommission_verb { start, status, cancel };

h::response decommission(const admin_context& ctx, std::string_view id_text,
                         decommission_verb verb) {
    auto id = parse_node_id(id_text);
    if (!id)
        return h::error_response(h::status::bad_request, "broker id must be an integer >= 0");
    if (!ctx.decommission)
        return h::error_response(h::status::service_unavailable,
                                 "decommission is not available on this broker yet");
    if (verb != decommission_verb::status) {
        auto a = verb == decommission_verb::start ? ctx.decommission->start(*id)
                                                  : ctx.decommission->cancel(*id);
        if (a.result != decommission_control::outcome::ok)
            return decommission_failed(a, *id);
    }
    auto st = ctx.decommission->status(*id);
    if (!st) {
        return h::error_response(h::status::not_found,
                                 "no such broker: " + std::to_string(id->value()));
    }
    return decommission_status_json(
        *id, *st, verb == decommission_verb::start ? h::status::accepted : h::status::ok);
}

}  // namespace

void add_admin_routes(spool::http::router& r, const admin_context* ctx) {
    using h::verb;
    r.add(verb::get, "/v1/broker",
          [ctx](const h::request&, const h::path_params&) { return get_broker(*ctx); });
    r.add(verb::get, "/v1/cluster",
          [ctx](const h::request&, const h::path_params&) { return get_cluster(*ctx); });
    r.add(verb::get, "/v1/cluster/health",
          [ctx](const h::request&, const h::path_params&) { return get_health(*ctx); });
    r.add(verb::get, "/v1/topics",
          [ctx](const h::request&, const h::path_params&) { return get_topics(*ctx); });
    r.add(verb::get, "/v1/topics/{name}", [ctx](const h::request&, const h::path_params& p) {
        return get_topic(*ctx, *p.get("name"));
    });
    r.add(verb::get, "/v1/brokers/{id}/restart-safe",
          [ctx](const h::request&, const h::path_params& p) {
              return get_restart_safe(*ctx, *p.get("id"));
          });
    r.add(verb::post, "/v1/brokers/{id}/decommission",
          [ctx](const h::request&, const h::path_params& p) {
              return decommission(*ctx, *p.get("id"), decommission_verb::start);
          });
    r.add(verb::get, "/v1/brokers/{id}/decommission",
          [ctx](const h::request&, const h::path_params& p) {
              return decommission(*ctx, *p.get("id"), decommission_verb::status);
          });
    r.add(verb::delete_, "/v1/brokers/{id}/decommission",
          [ctx](const h::request&, const h::path_params& p) {
              return decommission(*ctx, *p.get("id"), decommission_verb::cancel);
          });
}

}  // namespace spool::broker::http
