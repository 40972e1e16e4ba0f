#include "operator/status/conditions.h"

#include <algorithm>

namespace spool::op::status {

reason reason_for_error(int http_status, std::string_view error_reason) {
    if (http_status == 403 || http_status == 401) {
        return reasons::forbidden;
    }
    if (error_reason == "Unreachable" && http_status == 0) {
        return reasons::api_error;
    }
    if (error_reason == reasons::brokers_unreachable.name) {
        return reasons::brokers_unreachable;
    }
    if (error_reason == reasons::invalid_spec.name || http_status == 422) {
        return reasons::invalid_spec;
    }
    return reasons::api_error;
}

const api::condition* find_condition(const std::vector<api::condition>& conditions,
                                     std::string_view type) {
    for (const auto& c : conditions) {
        if (c.type == type) {
            return &c;
        }
    }
    return nullptr;
}

void set_condition(std::vector<api::condition>& conditions, std::string_view type, bool status,
                   const reason& why, std::string_view message, int64_t generation,
                   std::string_view now) {
    std::string status_text = status ? "True" : "False";
    auto it = std::find_if(conditions.begin(), conditions.end(),
                           [&](const api::condition& c) { return c.type == type; });
    if (it == conditions.end()) {
        conditions.push_back(api::condition{std::string(type), status_text, generation,
                                            std::string(now), why.name, std::string(message)});
    } else {
        if (it->status != status_text) {
            it->last_transition_time = std::string(now);
        }
        it->status = status_text;
        it->observed_generation = generation;
        it->reason = why.name;
        it->message = std::string(message);
    }
    std::sort(conditions.begin(), conditions.end(),
              [](const api::condition& a, const api::condition& b) { return a.type < b.type; });
}

void remove_condition(std::vector<api::condition>& conditions, std::string_view type) {
    conditions.erase(std::remove_if(conditions.begin(), conditions.end(),
                                    [&](const api::condition& c) { return c.type == type; }),
                     conditions.end());
}

}  // namespace spool::op::status
