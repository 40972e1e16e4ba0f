// DescribeAcls, CreateAcls and DeleteAcls (Kafka's AclApis): the caller needs Describe (listing)
// or Alter (changing) on the Cluster; without an authorizer they answer SECURITY_DISABLED, as
// Kafka does. Bindings are matched against one snapshot's index and changed through the store,
// which every broker's snapshot then shows.

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"
#include "broker/security/acl.h"
#include "protocol/messages/create_acls.h"
#include "protocol/messages/delete_acls.h"
#include "protocol/messages/describe_acls.h"

#include <map>
#include <tuple>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
namespace sec = security;

constexpr std::string_view no_authorizer = "No Authorizer is configured.";

// A request field's code as Kafka reads it: a value outside the enum is UNKNOWN.
template <class E>
E code_of(int8_t v, E max) {
    return v < 0 || v > static_cast<int8_t>(max) ? E{} : static_cast<E>(v);
}
sec::resource_type resource_of(int8_t v) {
    return code_of(v, sec::resource_type::user);
}
sec::pattern_type pattern_of(int8_t v) {
    return code_of(v, sec::pattern_type::prefixed);
}
sec::acl_operation operation_of(int8_t v) {
    return code_of(v, sec::acl_operation::two_phase_commit);
}
sec::acl_permission permission_of(int8_t v) {
    return code_of(v, sec::acl_permission::allow);
}
int8_t wire(auto e) {
    return static_cast<int8_t>(e);
}

// Kafka's AclApis preamble: the caller needs `op` on the cluster, then an authorizer must be
// configured; the error (and message) that refuses the request, if any.
struct refusal {
    error_code error;
    std::optional<std::string> message;
};
std::optional<refusal> refused(const request_authz& authz, sec::acl_operation op) {
    if (!authz.cluster(op)) {
        return refusal{error_code::cluster_authorization_failed, std::nullopt};
    }
    if (!authz.enabled()) {
        return refusal{error_code::security_disabled, std::string(no_authorizer)};
    }
    return std::nullopt;
}

template <class Request>
sec::acl_filter filter_of(const Request& r) {
    sec::acl_filter f;
    f.type = resource_of(r.resource_type_filter);
    f.name = r.resource_name_filter;
    f.pattern = pattern_of(r.pattern_type_filter);
    f.principal = r.principal_filter;
    f.host = r.host_filter;
    f.operation = operation_of(r.operation);
    f.permission = permission_of(r.permission_type);
    return f;
}

// ---- DescribeAcls ----

using describe_response = protocol::describe_acls_response;

boost::asio::awaitable<describe_response> describe(request_ctx& ctx,
                                                   protocol::describe_acls_request& req) {
    describe_response resp;
    auto snap = ctx.svc.store.snapshot();
    if (auto no = refused(request_authz(ctx, *snap), sec::acl_operation::describe)) {
        resp.error_code = code(no->error);
        resp.error_message = no->message;
        co_return resp;
    }
    auto filter = filter_of(req);
    if (auto why = sec::invalid_filter(filter)) {
        resp.error_code = code(error_code::invalid_request);
        resp.error_message = std::move(*why);
        co_return resp;
    }
    // One resource entry per (type, name, pattern), bindings in index order.
    std::map<std::tuple<sec::resource_type, std::string_view, sec::pattern_type>, size_t> at;
    for (const auto& b : snap->acls->bindings()) {
        if (!sec::matches(filter, b)) {
            continue;
        }
        auto [it, added] = at.try_emplace({b.type, b.name, b.pattern}, resp.resources.size());
        if (added) {
            auto& r = resp.resources.emplace_back();
            r.resource_type = wire(b.type);
            r.resource_name = b.name;
            r.pattern_type = wire(b.pattern);
        }
        auto& d = resp.resources[it->second].acls.emplace_back();
        d.principal = b.principal;
        d.host = b.host;
        d.operation = wire(b.operation);
        d.permission_type = wire(b.permission);
    }
    co_return resp;
}

// ---- CreateAcls ----

using create_response = protocol::create_acls_response;

boost::asio::awaitable<create_response> create(request_ctx& ctx,
                                               protocol::create_acls_request& req) {
    create_response resp;
    auto snap = ctx.svc.store.snapshot();
    if (auto no = refused(request_authz(ctx, *snap), sec::acl_operation::alter)) {
        for (size_t i = 0; i < req.creations.size(); ++i) {
            resp.results.push_back({code(no->error), no->message, {}});
        }
        co_return resp;
    }
    resp.results.resize(req.creations.size());
    std::vector<sec::acl_binding> valid;
    std::vector<size_t> valid_at;
    for (size_t i = 0; i < req.creations.size(); ++i) {
        const auto& c = req.creations[i];
        sec::acl_binding b{resource_of(c.resource_type),
                           c.resource_name,
                           pattern_of(c.resource_pattern_type),
                           c.principal,
                           c.host,
                           operation_of(c.operation),
                           permission_of(c.permission_type)};
        if (auto why = sec::invalid_binding(b)) {
            resp.results[i].error_code = code(error_code::invalid_request);
            resp.results[i].error_message = std::move(*why);
            continue;
        }
        valid.push_back(std::move(b));
        valid_at.push_back(i);
    }
    if (!valid.empty()) {
        auto op = ctx.svc.store.create_acls(std::move(valid));
        auto done = co_await std::move(op);
        if (!done) {
            auto f = from_store(done.error());
            for (size_t i : valid_at) {
                resp.results[i].error_code = code(f.error);
                resp.results[i].error_message = f.message;
            }
        }
    }
    co_return resp;
}

// ---- DeleteAcls ----

using delete_response = protocol::delete_acls_response;

boost::asio::awaitable<delete_response> remove(request_ctx& ctx,
                                               protocol::delete_acls_request& req) {
    delete_response resp;
    auto snap = ctx.svc.store.snapshot();
    if (auto no = refused(request_authz(ctx, *snap), sec::acl_operation::alter)) {
        for (size_t i = 0; i < req.filters.size(); ++i) {
            auto& r = resp.filter_results.emplace_back();
            r.error_code = code(no->error);
            r.error_message = no->message;
        }
        co_return resp;
    }
    resp.filter_results.resize(req.filters.size());
    std::vector<sec::acl_binding> doomed;
    for (size_t i = 0; i < req.filters.size(); ++i) {
        auto filter = filter_of(req.filters[i]);
        auto& r = resp.filter_results[i];
        if (auto why = sec::invalid_filter(filter)) {
            r.error_code = code(error_code::invalid_request);
            r.error_message = std::move(*why);
            continue;
        }
        for (const auto& b : snap->acls->bindings()) {
            if (!sec::matches(filter, b)) {
                continue;
            }
            auto& m = r.matching_acls.emplace_back();
            m.resource_type = wire(b.type);
            m.resource_name = b.name;
            m.pattern_type = wire(b.pattern);
            m.principal = b.principal;
            m.host = b.host;
            m.operation = wire(b.operation);
            m.permission_type = wire(b.permission);
            doomed.push_back(b);
        }
    }
    if (!doomed.empty()) {
        auto op = ctx.svc.store.delete_acls(std::move(doomed));
        auto done = co_await std::move(op);
        if (!done) {
            auto f = from_store(done.error());
            for (auto& r : resp.filter_results) {
                if (!r.matching_acls.empty()) {
                    r.error_code = code(f.error);
                    r.error_message = f.message;
                    r.matching_acls.clear();
                }
            }
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_describe_acls(request_ctx& ctx) {
    return typed_handler<protocol::describe_acls_request, describe_response, describe>(ctx);
}
handler_result handle_create_acls(request_ctx& ctx) {
    return typed_handler<protocol::create_acls_request, create_response, create>(ctx);
}
handler_result handle_delete_acls(request_ctx& ctx) {
    return typed_handler<protocol::delete_acls_request, delete_response, remove>(ctx);
}

}  // namespace spool::broker::handlers
