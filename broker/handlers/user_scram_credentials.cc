// DescribeUserScramCredentials and AlterUserScramCredentials: the SCRAM credentials SASL/SCRAM
// logins are checked against, kept in the metadata store (cluster_state::user_scram) as Kafka's
// credential text. The client salts the password; the broker keeps StoredKey and ServerKey only.
// Errors and messages are Kafka's (ScramControlManager). With an authorizer, describing needs
// Describe on the cluster and altering Alter on it (KafkaApis, ControllerApis), as credentials
// are the keys to every principal.

#include "protocol/messages/alter_user_scram_credentials.h"
#include "protocol/messages/describe_user_scram_credentials.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"
#include "broker/security/scram.h"

#include <map>
#include <set>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using describe_response = protocol::describe_user_scram_credentials_response;
using alter_response = protocol::alter_user_scram_credentials_response;

describe_response::describe_user_scram_credentials_result describe_one(
    const metadata::cluster_state& s, const std::string& user) {
    describe_response::describe_user_scram_credentials_result r;
    r.user = user;
    auto it = s.user_scram.find(user);
    if (it == s.user_scram.end() || it->second.empty()) {
        r.error_code = code(error_code::resource_not_found);
        r.error_message = "Attempt to describe a user credential that does not exist: " + user;
        return r;
    }
    for (const auto& [mechanism, text] : it->second) {
        auto m = security::scram_mechanism_named(mechanism);
        auto c = security::decode_scram_credential(text);
        if (m && c) {
            r.credential_infos.push_back({static_cast<int8_t>(*m), c->iterations, {}});
        }
    }
    return r;
}

boost::asio::awaitable<describe_response> describe(
    request_ctx& ctx, protocol::describe_user_scram_credentials_request& req) {
    describe_response resp;
    auto snap = ctx.svc.store.snapshot();
    if (!request_authz(ctx, *snap).cluster(security::acl_operation::describe)) {
        // DescribeUserScramCredentialsRequest.getErrorResponse: the top-level error only.
        resp.error_code = code(error_code::cluster_authorization_failed);
        resp.error_message = "Cluster authorization failed.";
        co_return resp;
    }
    if (!req.users || req.users->empty()) {
        for (const auto& [user, credentials] : snap->user_scram) {
            resp.results.push_back(describe_one(*snap, user));
        }
        co_return resp;
    }
    std::map<std::string, int> seen;
    for (const auto& u : *req.users) {
        ++seen[u.name];
    }
    std::set<std::string> answered;
    for (const auto& u : *req.users) {
        if (!answered.insert(u.name).second) {
            continue;
        }
        if (seen[u.name] > 1) {
            describe_response::describe_user_scram_credentials_result r;
            r.user = u.name;
            r.error_code = code(error_code::duplicate_resource);
            r.error_message =
                "Cannot describe SCRAM credentials for the same user twice in a single request: " +
                u.name;
            resp.results.push_back(std::move(r));
            continue;
        }
        resp.results.push_back(describe_one(*snap, u.name));
    }
    co_return resp;
}

struct user_change {
    std::optional<std::pair<error_code, std::string>> error;
    std::map<std::string, std::string> credentials;  // the user's map after the change
};

void fail(user_change& c, error_code e, std::string message) {
    if (!c.error) {
        c.error.emplace(e, std::move(message));
    }
}

boost::asio::awaitable<alter_response> alter(request_ctx& ctx,
                                             protocol::alter_user_scram_credentials_request& req) {
    alter_response resp;
    auto snap = ctx.svc.store.snapshot();
    if (!request_authz(ctx, *snap).cluster(security::acl_operation::alter)) {
        // AlterUserScramCredentialsRequest.getErrorResponse: every user named, in name order,
        // with the error.
        std::set<std::string> named;
        for (const auto& d : req.deletions) {
            named.insert(d.name);
        }
        for (const auto& u : req.upsertions) {
            named.insert(u.name);
        }
        for (const auto& user : named) {
            alter_response::alter_user_scram_credentials_result r;
            r.user = user;
            r.error_code = code(error_code::cluster_authorization_failed);
            r.error_message = "Cluster authorization failed.";
            resp.results.push_back(std::move(r));
        }
        co_return resp;
    }
    // Kafka refuses a user named more than once in one request, whatever the mechanisms.
    std::map<std::string, int> mentions;
    for (const auto& d : req.deletions) {
        ++mentions[d.name];
    }
    for (const auto& u : req.upsertions) {
        ++mentions[u.name];
    }
    std::map<std::string, user_change> users;  // in name order, as Kafka answers
    auto start = [&](const std::string& user) -> user_change& {
        auto [it, fresh] = users.try_emplace(user);
        if (fresh) {
            if (auto s = snap->user_scram.find(user); s != snap->user_scram.end()) {
                it->second.credentials = s->second;
            }
        }
        return it->second;
    };
    auto check = [&](user_change& c, const std::string& user, int8_t type)
        -> std::optional<security::scram_mechanism> {
        if (mentions[user] > 1) {
            fail(c, error_code::duplicate_resource,
                 "A user credential cannot be altered twice in the same request");
            return std::nullopt;
        }
        if (user.empty()) {
            fail(c, error_code::unacceptable_credential, "Username must not be empty");
            return std::nullopt;
        }
        auto m = security::scram_mechanism_from_type(type);
        if (!m) {
            fail(c, error_code::unsupported_sasl_mechanism, "Unknown SCRAM mechanism");
            return std::nullopt;
        }
        return m;
    };
    for (const auto& d : req.deletions) {
        auto& c = start(d.name);
        auto m = check(c, d.name, d.mechanism);
        if (!m) {
            continue;
        }
        if (c.credentials.erase(std::string(security::scram_mechanism_name(*m))) == 0) {
            fail(c, error_code::resource_not_found,
                 "Attempt to delete a user credential that does not exist");
        }
    }
    for (const auto& u : req.upsertions) {
        auto& c = start(u.name);
        auto m = check(c, u.name, u.mechanism);
        if (!m) {
            continue;
        }
        if (u.iterations < security::scram_min_iterations) {
            fail(c, error_code::unacceptable_credential, "Too few iterations");
            continue;
        }
        if (u.iterations > security::scram_max_iterations) {
            fail(c, error_code::unacceptable_credential, "Too many iterations");
            continue;
        }
        auto credential = security::scram_credential_from_salted(*m, u.salted_password, u.salt,
                                                                 u.iterations);
        c.credentials[std::string(security::scram_mechanism_name(*m))] =
            security::encode_scram_credential(credential);
    }
    for (auto& [user, c] : users) {
        alter_response::alter_user_scram_credentials_result r;
        r.user = user;
        if (!c.error) {
            auto set = ctx.svc.store.set_user_scram_credentials(user, std::move(c.credentials));
            if (auto done = co_await std::move(set); !done) {
                auto failed = from_store(done.error());
                c.error.emplace(failed.error, failed.message.value_or(""));
            }
        }
        if (c.error) {
            r.error_code = code(c.error->first);
            r.error_message = c.error->second;
        }
        resp.results.push_back(std::move(r));
    }
    co_return resp;
}

}  // namespace

handler_result handle_describe_user_scram_credentials(request_ctx& ctx) {
    return typed_handler<protocol::describe_user_scram_credentials_request, describe_response,
                         describe>(ctx);
}

handler_result handle_alter_user_scram_credentials(request_ctx& ctx) {
    return typed_handler<protocol::alter_user_scram_credentials_request, alter_response, alter>(
        ctx);
}

}  // namespace spool::broker::handlers
