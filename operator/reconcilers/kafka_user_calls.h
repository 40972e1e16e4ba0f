#pragma once

// The User reconciler's Kafka requests (DescribeUserScramCredentials, AlterUserScramCredentials,
// DescribeAcls, CreateAcls, DeleteAcls) over kafka_admin's connection. Templates on that
// connection type so that kafka_admin.cc keeps its one connection (and whatever authentication
// it does) and only forwards; included by kafka_admin.cc alone.
//
// Kafka answers these at any broker (it forwards to the controller), so they go to the bootstrap
// connection.

#include "operator/reconcilers/admin_client.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "protocol/messages/create_acls.h"
#include "protocol/messages/delete_acls.h"
#include "protocol/messages/describe_acls.h"
#include "protocol/messages/describe_user_scram_credentials.h"

#include <optional>
#include <string>
#include <vector>

namespace spool::op::reconcilers::user_calls {

// Kafka error code -> op::error, as kafka_admin.cc names them.
using error_fn = error (*)(int16_t code, const std::optional<std::string>& message,
                           const std::string& what);

inline constexpr int16_t resource_not_found = 91;  // RESOURCE_NOT_FOUND: no such credential
inline constexpr int16_t security_disabled = 54;   // SECURITY_DISABLED: no authorizer

template <class Conn>
result<std::vector<int8_t>> describe_scram(Conn& c, error_fn fail, const std::string& user) {
    namespace proto = spool::protocol;
    proto::describe_user_scram_credentials_request req;
    req.users = std::vector<proto::describe_user_scram_credentials_request::user_name>{{user, {}}};
    auto r = c.template call<proto::describe_user_scram_credentials_request,
                             proto::describe_user_scram_credentials_response>(req);
    if (!r) {
        return r.error();
    }
    const auto& resp = r.value().first;
    if (resp.error_code != 0) {
        return fail(resp.error_code, resp.error_message, "describe SCRAM credentials of " + user);
    }
    std::vector<int8_t> mechanisms;
    for (const auto& res : resp.results) {
        if (res.user != user || res.error_code == resource_not_found) {
            continue;
        }
        if (res.error_code != 0) {
            return fail(res.error_code, res.error_message, "describe SCRAM credentials of " + user);
        }
        for (const auto& info : res.credential_infos) {
            mechanisms.push_back(info.mechanism);
        }
    }
    return mechanisms;
}

template <class Conn, class Request>
result<void> alter_scram(Conn& c, error_fn fail, const Request& req, const std::string& what) {
    namespace proto = spool::protocol;
    auto r = c.template call<proto::alter_user_scram_credentials_request,
                             proto::alter_user_scram_credentials_response>(req);
    if (!r) {
        return r.error();
    }
    for (const auto& res : r.value().first.results) {
        if (res.error_code != 0 && res.error_code != resource_not_found) {
            return fail(res.error_code, res.error_message, what);
        }
    }
    return ok();
}

template <class Conn>
result<void> upsert_scram(Conn& c, error_fn fail, const scram_upsert& u) {
    spool::protocol::alter_user_scram_credentials_request req;
    auto& up = req.upsertions.emplace_back();
    up.name = u.user;
    up.mechanism = u.mechanism;
    up.iterations = u.iterations;
    up.salt = u.salt;
    up.salted_password = u.salted_password;
    return alter_scram(c, fail, req, "set SCRAM credential of " + u.user);
}

template <class Conn>
result<void> delete_scram(Conn& c, error_fn fail, const std::string& user, int8_t mechanism) {
    spool::protocol::alter_user_scram_credentials_request req;
    auto& del = req.deletions.emplace_back();
    del.name = user;
    del.mechanism = mechanism;
    return alter_scram(c, fail, req, "delete SCRAM credential of " + user);
}

template <class Conn>
result<std::vector<acl_binding>> describe_acls(Conn& c, error_fn fail,
                                               const std::string& principal) {
    namespace proto = spool::protocol;
    proto::describe_acls_request req;
    req.resource_type_filter = 1;  // ANY
    req.resource_name_filter = std::nullopt;
    req.pattern_type_filter = 1;  // ANY
    req.principal_filter = principal;
    req.host_filter = std::nullopt;
    req.operation = 1;        // ANY
    req.permission_type = 1;  // ANY
    auto r = c.template call<proto::describe_acls_request, proto::describe_acls_response>(req);
    if (!r) {
        return r.error();
    }
    const auto& resp = r.value().first;
    if (resp.error_code != 0) {
        auto e = fail(resp.error_code, resp.error_message, "describe ACLs of " + principal);
        if (resp.error_code == security_disabled) {
            e.reason = acls_unsupported_reason;  // the caller tells this one apart
            e.transient = false;
        }
        return e;
    }
    std::vector<acl_binding> out;
    for (const auto& res : resp.resources) {
        for (const auto& a : res.acls) {
            out.push_back({res.resource_type, res.resource_name, res.pattern_type, a.principal,
                           a.host, a.operation, a.permission_type});
        }
    }
    return out;
}

template <class Conn>
result<void> create_acls(Conn& c, error_fn fail, const std::vector<acl_binding>& bindings) {
    namespace proto = spool::protocol;
    proto::create_acls_request req;
    for (const auto& b : bindings) {
        req.creations.push_back({b.resource_type, b.resource_name, b.pattern_type, b.principal,
                                 b.host, b.operation, b.permission, {}});
    }
    auto r = c.template call<proto::create_acls_request, proto::create_acls_response>(req);
    if (!r) {
        return r.error();
    }
    for (const auto& res : r.value().first.results) {
        if (res.error_code != 0) {
            return fail(res.error_code, res.error_message, "create ACLs");
        }
    }
    return ok();
}

template <class Conn>
result<void> delete_acls(Conn& c, error_fn fail, const std::vector<acl_binding>& bindings) {
    namespace proto = spool::protocol;
    proto::delete_acls_request req;
    for (const auto& b : bindings) {
        req.filters.push_back({b.resource_type, b.resource_name, b.pattern_type, b.principal,
                               b.host, b.operation, b.permission, {}});
    }
    auto r = c.template call<proto::delete_acls_request, proto::delete_acls_response>(req);
    if (!r) {
        return r.error();
    }
    for (const auto& res : r.value().first.filter_results) {
        if (res.error_code != 0) {
            return fail(res.error_code, res.error_message, "delete ACLs");
        }
    }
    return ok();
}

}  // namespace spool::op::reconcilers::user_calls
