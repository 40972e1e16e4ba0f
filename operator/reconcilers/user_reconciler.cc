#include "operator/reconcilers/user_reconciler.h"

#include "common/log.h"
#include "operator/builders/common.h"
#include "operator/builders/security.h"
#include "operator/kube/config.h"
#include "operator/kube/leader_elector.h"
#include "operator/reconcilers/certificates.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/finalizer.h"
#include "operator/reconcilers/pause.h"
#include "operator/reconcilers/user_credentials.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <set>

namespace spool::op::reconcilers {

using namespace std::chrono_literals;

namespace {

constexpr const char* user_label = "spool.dev/user";

std::string joined(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) {
        out += (out.empty() ? "" : "; ") + p;
    }
    return out;
}

error admin_failure(const error& e, const std::string& what) {
    error failure = e;
    failure.message = fmt::format("{}: {}", what, e.message);
    return failure;
}

}  // namespace

struct user_reconciler::context {
    json raw;
    api::user user;
    api::user_status next;
    std::optional<api::cluster> cluster;
    std::string bootstrap;
    std::unique_ptr<admin_client> admin;
    std::optional<json> secret;                // the User's Secret as it is
    std::map<std::string, std::string> data;   // what it should hold (plain text)
    std::string principal;
    size_t acls = 0;
    std::string changed;  // what this pass changed in Kafka, for the event
};

user_reconciler::user_reconciler(kube::client& api, event_recorder& events,
                                 admin_client_factory& admins, std::string bootstrap_override)
    : _api(api),
      _events(events),
      _admins(admins),
      _bootstrap_override(std::move(bootstrap_override)) {}

const std::vector<user_reconciler::step>& user_reconciler::steps() {
    static const std::vector<step> list = {
        {"pause", &user_reconciler::check_pause},
        {"validate", &user_reconciler::validate},
        {"finalizer", &user_reconciler::ensure_finalizer},
        {"cluster", &user_reconciler::read_cluster},
        {"connect", &user_reconciler::connect},
        {"previous", &user_reconciler::remove_previous},
        {"credentials", &user_reconciler::credentials},
        {"secret", &user_reconciler::write_secret},
        {"acls", &user_reconciler::sync_acls},
        {"status", &user_reconciler::ready},
    };
    return list;
}

std::vector<std::string> user_reconciler::step_names() {
    std::vector<std::string> names;
    for (const auto& s : steps()) {
        names.emplace_back(s.name);
    }
    return names;
}

std::string user_reconciler::clients_ca_secret(const std::string& cluster) {
    return cluster + "-clients-ca";
}

std::vector<acl_binding> user_reconciler::wanted_acls(const api::user& u,
                                                      const std::string& principal) {
    std::set<acl_binding> out;
    for (const auto& acl : u.spec.acls) {
        for (int8_t op : acl.operations) {
            out.insert({acl.resource_type, acl.resource_name, acl.pattern_type, principal,
                        acl.host, op, acl.permission});
        }
    }
    return {out.begin(), out.end()};
}

std::map<std::string, std::string> user_reconciler::secret_data(const json& secret) {
    std::map<std::string, std::string> out;
    if (const json* data = find(secret, "data"); data && data->is_object()) {
        for (const auto& [k, v] : data->as_object()) {
            if (auto decoded = kube::base64_decode(v.is_string() ? v.as_string() : "")) {
                out[k] = decoded.value();
            }
        }
    }
    return out;
}

reconcile_result user_reconciler::reconcile(const std::string& key) {
    auto [ns, name] = split_key(key);
    auto got = _api.get(kube::kinds::user, ns, name);
    if (!got) {
        return got.error().is_not_found() ? reconcile_result::done()
                                          : reconcile_result::failed(got.error());
    }
    context ctx;
    ctx.raw = got.value();
    auto parsed = api::parse_user(ctx.raw);
    if (!parsed) {
        log::get("user")->error("{}: {}", key, parsed.error().message);
        return reconcile_result::done();
    }
    ctx.user = std::move(parsed).value();
    ctx.next = ctx.user.status;
    ctx.principal = api::principal_name(ctx.user.spec.authentication, ctx.user.meta.name);
    if (ctx.user.meta.deleting) {
        return finalize(ctx);
    }
    step_outcome outcome;
    for (const auto& s : steps()) {
        outcome = (this->*s.run)(ctx);
        if (outcome.what != step_outcome::kind::next) {
            log::get("user")->debug("{}: step {} stopped the pass: {}", key, s.name,
                                    outcome.message);
            break;
        }
    }
    if (outcome.what == step_outcome::kind::settled) {
        return reconcile_result::done();
    }
    return sync_status(ctx, outcome);
}

user_reconciler::step_outcome user_reconciler::check_pause(context& ctx) {
    if (!reconciliation_paused(ctx.user.meta)) {
        return {};
    }
    return {step_outcome::kind::hold, false, status::reasons::paused,
            fmt::format("{}=true", pause_annotation)};
}

user_reconciler::step_outcome user_reconciler::validate(context& ctx) {
    auto problems = api::validate_user(ctx.user);
    if (ctx.user.spec.password_from && ctx.user.spec.password_from->name == ctx.user.meta.name) {
        problems.push_back(
            "the password Secret must not have the User's name: that Secret is the operator's");
    }
    if (problems.empty()) {
        return {};
    }
    auto message = joined(problems);
    return {step_outcome::kind::report, false, status::reasons::invalid_spec, message,
            make_error("InvalidSpec", message, false)};
}

user_reconciler::step_outcome user_reconciler::ensure_finalizer(context& ctx) {
    const auto& u = ctx.user;
    if (u.meta.has_finalizer(api::user_finalizer)) {
        return {};
    }
    if (auto r = add_finalizer(_api, kube::kinds::user, u.meta, api::user_finalizer); !r) {
        return {step_outcome::kind::report, false,
                status::reason_for_error(r.error().http_status, r.error().reason),
                "add finalizer: " + r.error().message, r.error()};
    }
    return {step_outcome::kind::settled};  // the patch's watch event brings us back
}

user_reconciler::step_outcome user_reconciler::read_cluster(context& ctx) {
    const auto& u = ctx.user;
    auto cluster = _api.get(kube::kinds::cluster, u.meta.namespace_, u.spec.cluster_name);
    if (!cluster) {
        if (cluster.error().is_not_found()) {
            return {step_outcome::kind::report,
                    false,
                    status::reasons::cluster_not_found,
                    fmt::format("Cluster {} not found in {}", u.spec.cluster_name,
                                u.meta.namespace_),
                    std::nullopt,
                    30s};
        }
        return {step_outcome::kind::report, false, status::reasons::api_error,
                "read Cluster: " + cluster.error().message, cluster.error()};
    }
    auto c = api::parse_cluster(cluster.value());
    if (!c) {
        return {step_outcome::kind::report, false, status::reasons::api_error,
                "parse Cluster: " + c.error().message, c.error()};
    }
    ctx.bootstrap = _bootstrap_override.empty() ? builders::operator_bootstrap_address(c.value())
                                                : _bootstrap_override;
    ctx.cluster = std::move(c).value();
    return {};
}

user_reconciler::step_outcome user_reconciler::connect(context& ctx) {
    auto admin = connect_as_operator(_api, _admins, *ctx.cluster, ctx.bootstrap);
    if (!admin) {
        auto e = admin_failure(admin.error(), "connect to " + ctx.bootstrap);
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    ctx.admin = std::move(admin).value();
    return {};
}

result<void> user_reconciler::revoke(admin_client& admin, const std::string& user_name,
                                     bool scram, const std::string& acl_principal) {
    if (scram) {
        if (auto r = admin.delete_scram(user_name, scram_sha_512); !r) {
            return r.error();
        }
    }
    if (acl_principal.empty()) {
        return ok();
    }
    auto acls = admin.describe_acls(acl_principal);
    if (!acls && acls.error().reason == acls_unsupported_reason) {
        return ok();  // no authorizer: no ACLs to remove
    }
    if (!acls) {
        return acls.error();
    }
    if (!acls.value().empty()) {
        return admin.delete_acls(acls.value());
    }
    return ok();
}

user_reconciler::step_outcome user_reconciler::remove_previous(context& ctx) {
    const auto& u = ctx.user;
    auto before = api::parse_user_auth(u.status.authentication);
    if (!before || *before == u.spec.authentication) {
        return {};
    }
    // Both types authenticate as the same principal, so its ACLs stay (the acls step keeps them
    // equal to the spec); only the old type's credential goes. A certificate cannot be revoked:
    // it stays valid until it expires (no revocation list), as with a deleted User.
    const auto old_principal = api::principal_name(*before, u.meta.name);
    auto r = revoke(*ctx.admin, u.meta.name, *before == api::user_auth::scram_sha_512,
                    old_principal == ctx.principal ? std::string() : old_principal);
    if (!r) {
        auto e = admin_failure(r.error(), fmt::format("remove the {} credentials",
                                                      u.status.authentication));
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    ctx.next.authentication.clear();
    ctx.changed = fmt::format("removed the {} credentials; ", u.status.authentication);
    return {};
}

user_reconciler::step_outcome user_reconciler::credentials(context& ctx) {
    const auto& u = ctx.user;
    auto secret = _api.get(kube::kinds::secret, u.meta.namespace_, u.meta.name);
    if (secret) {
        auto labels = api::parse_meta(secret.value()).labels;
        auto it = labels.find(user_label);
        if (it == labels.end() || it->second != u.meta.name) {
            return {step_outcome::kind::report,
                    false,
                    status::reasons::secret_conflict,
                    fmt::format("Secret {} exists and is not this User's (no label {}={}); "
                                "delete or rename it",
                                u.meta.name, user_label, u.meta.name),
                    std::nullopt,
                    60s};
        }
        ctx.secret = secret.value();
    } else if (!secret.error().is_not_found()) {
        return {step_outcome::kind::report, false, status::reasons::api_error,
                "read Secret: " + secret.error().message, secret.error()};
    }
    return u.spec.authentication == api::user_auth::tls ? tls_credentials(ctx)
                                                        : scram_credentials(ctx);
}

user_reconciler::step_outcome user_reconciler::scram_credentials(context& ctx) {
    const auto& u = ctx.user;
    const auto& name = u.meta.name;
    auto held = ctx.secret ? secret_data(*ctx.secret) : std::map<std::string, std::string>{};
    std::string password = held.count("password") ? held["password"] : "";
    if (const auto& ref = u.spec.password_from) {
        auto source = _api.get(kube::kinds::secret, u.meta.namespace_, ref->name);
        auto data = source ? secret_data(source.value()) : std::map<std::string, std::string>{};
        if (!source || !data.count(ref->key) || data[ref->key].empty()) {
            if (source || source.error().is_not_found()) {
                return {step_outcome::kind::report,
                        false,
                        status::reasons::password_secret_not_found,
                        fmt::format("Secret {} with a non-empty key {} not found", ref->name,
                                    ref->key),
                        std::nullopt,
                        30s};
            }
            return {step_outcome::kind::report, false, status::reasons::api_error,
                    "read the password Secret: " + source.error().message, source.error()};
        }
        password = data[ref->key];
    } else if (password.empty()) {
        password = generate_password();
    }
    auto mechanisms = ctx.admin->describe_scram(name);
    if (!mechanisms) {
        auto e = admin_failure(mechanisms.error(), "describe SCRAM credentials");
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    bool in_kafka = std::count(mechanisms.value().begin(), mechanisms.value().end(),
                               scram_sha_512) > 0;
    // The Secret records the password Kafka has: Kafka itself never gives it back.
    if (!in_kafka || held["password"] != password) {
        if (auto r = ctx.admin->upsert_scram(scram_credential(name, password)); !r) {
            auto e = admin_failure(r.error(), "set SCRAM-SHA-512 credential");
            return {step_outcome::kind::report, false, status::reasons::admin_error, e.message,
                    e};
        }
        ctx.changed += "set the SCRAM-SHA-512 credential; ";
    }
    ctx.next.authentication = api::to_string(api::user_auth::scram_sha_512);
    ctx.data = {{"username", name},
                {"password", password},
                {"sasl.jaas.config", scram_jaas_config(name, password)}};
    return {};
}

user_reconciler::step_outcome user_reconciler::tls_credentials(context& ctx) {
    const auto& u = ctx.user;
    auto ca_name = clients_ca_secret(u.spec.cluster_name);
    auto ca = _api.get(kube::kinds::secret, u.meta.namespace_, ca_name);
    auto ca_data = ca ? secret_data(ca.value()) : std::map<std::string, std::string>{};
    if (!ca_data.count("ca.crt") || !ca_data.count("ca.key")) {
        if (!ca && !ca.error().is_not_found()) {
            return {step_outcome::kind::report, false, status::reasons::api_error,
                    "read the clients CA: " + ca.error().message, ca.error()};
        }
        return {step_outcome::kind::report,
                false,
                status::reasons::waiting_for_clients_ca,
                fmt::format("waiting for Secret {} with ca.crt and ca.key", ca_name),
                std::nullopt,
                30s};
    }
    auto held = ctx.secret ? secret_data(*ctx.secret) : std::map<std::string, std::string>{};
    bool keep = false;
    if (held.count("user.crt") && held.count("user.key") && held["ca.crt"] == ca_data["ca.crt"]) {
        auto facts = inspect_certificate(held["user.crt"], ca_data["ca.crt"]);
        keep = facts && facts.value().signed_by_ca && facts.value().common_name == u.meta.name &&
               facts.value().not_after > std::time(nullptr) + int64_t{renew_before_days} * 86400;
    }
    if (keep) {
        ctx.data = {{"user.crt", held["user.crt"]},
                    {"user.key", held["user.key"]},
                    {"ca.crt", ca_data["ca.crt"]}};
    } else {
        auto cert = issue_client_certificate(ca_data["ca.crt"], ca_data["ca.key"], u.meta.name,
                                             certificate_days);
        if (!cert) {
            auto e = admin_failure(cert.error(), "issue a certificate from " + ca_name);
            return {step_outcome::kind::report, false, status::reasons::invalid_spec, e.message,
                    e};
        }
        ctx.data = {{"user.crt", cert.value().cert_pem},
                    {"user.key", cert.value().key_pem},
                    {"ca.crt", ca_data["ca.crt"]}};
    }
    ctx.next.authentication = api::to_string(api::user_auth::tls);
    return {};
}

user_reconciler::step_outcome user_reconciler::write_secret(context& ctx) {
    const auto& u = ctx.user;
    ctx.next.secret = u.meta.name;
    ctx.next.username = u.meta.name;  // the principal's name for both types (principal_name)
    if (ctx.secret && secret_data(*ctx.secret) == ctx.data) {
        return {};
    }
    json data = json::object();
    for (const auto& [k, v] : ctx.data) {
        data[k] = str(kube::base64_encode(v));
    }
    json owner = obj({{"apiVersion", str(api::api_version)},
                      {"kind", str("User")},
                      {"name", str(u.meta.name)},
                      {"uid", str(u.meta.uid)},
                      {"controller", boolean(true)},
                      {"blockOwnerDeletion", boolean(true)}});
    json labels = obj({{"app.kubernetes.io/name", str("spool")},
                       {"app.kubernetes.io/managed-by", str("spool-operator")},
                       {"app.kubernetes.io/component", str("user")},
                       {user_label, str(u.meta.name)},
                       {"spool.dev/cluster", str(u.spec.cluster_name)}});
    json secret = obj({{"apiVersion", str("v1")},
                       {"kind", str("Secret")},
                       {"metadata", obj({{"name", str(u.meta.name)},
                                         {"namespace", str(u.meta.namespace_)},
                                         {"labels", labels},
                                         {"ownerReferences", arr({owner})}})},
                       {"type", str("Opaque")},
                       {"data", data}});
    auto r = _api.apply(kube::kinds::secret, u.meta.namespace_, u.meta.name, secret);
    if (!r) {
        return {step_outcome::kind::report, false,
                status::reason_for_error(r.error().http_status, r.error().reason),
                "write Secret: " + r.error().message, r.error()};
    }
    return {};
}

user_reconciler::step_outcome user_reconciler::sync_acls(context& ctx) {
    auto wanted = wanted_acls(ctx.user, ctx.principal);
    ctx.acls = wanted.size();
    auto current = ctx.admin->describe_acls(ctx.principal);
    // No authorizer, no ACLs: a User without any is fine there (plain clusters, tests); one
    // with ACLs is told why they cannot apply.
    if (!current && current.error().reason == acls_unsupported_reason && wanted.empty()) {
        return {};
    }
    if (!current) {
        auto e = admin_failure(current.error(), "describe ACLs");
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    std::set<acl_binding> have(current.value().begin(), current.value().end());
    std::set<acl_binding> want(wanted.begin(), wanted.end());
    std::vector<acl_binding> missing, extra;
    std::set_difference(want.begin(), want.end(), have.begin(), have.end(),
                        std::back_inserter(missing));
    std::set_difference(have.begin(), have.end(), want.begin(), want.end(),
                        std::back_inserter(extra));
    if (!missing.empty()) {
        if (auto r = ctx.admin->create_acls(missing); !r) {
            auto e = admin_failure(r.error(), "create ACLs");
            return {step_outcome::kind::report, false, status::reasons::admin_error, e.message,
                    e};
        }
        ctx.changed += fmt::format("created {} ACLs; ", missing.size());
    }
    if (!extra.empty()) {
        if (auto r = ctx.admin->delete_acls(extra); !r) {
            auto e = admin_failure(r.error(), "delete ACLs");
            return {step_outcome::kind::report, false, status::reasons::admin_error, e.message,
                    e};
        }
        ctx.changed += fmt::format("deleted {} ACLs; ", extra.size());
    }
    return {};
}

user_reconciler::step_outcome user_reconciler::ready(context& ctx) {
    const auto& u = ctx.user;
    if (!ctx.changed.empty()) {
        ctx.changed.resize(ctx.changed.size() - 2);
        _events.normal(kube::kinds::user, u.meta, "Applied", ctx.changed);
    }
    return {step_outcome::kind::report, true, status::reasons::user_ready,
            fmt::format("{} {} with {} ACL bindings; credentials in Secret {}", ctx.principal,
                        api::to_string(u.spec.authentication), ctx.acls, u.meta.name)};
}

reconcile_result user_reconciler::sync_status(context& ctx, const step_outcome& outcome) {
    const auto& u = ctx.user;
    auto now = kube::time_now();
    bool paused = outcome.what == step_outcome::kind::hold;
    mark_paused(ctx.next.conditions, paused, u.meta.generation, now);
    if (!paused) {
        ctx.next.observed_generation = u.meta.generation;
        status::set_condition(ctx.next.conditions, status::types::ready, outcome.ready, outcome.why,
                              outcome.message, u.meta.generation, now);
        if (outcome.failure || !outcome.ready) {
            _events.warning(kube::kinds::user, u.meta, outcome.why.name, outcome.message);
        }
    }
    if (ctx.next != u.status) {
        json updated = ctx.raw;
        updated["status"] = api::to_json(ctx.next);
        auto w = _api.replace_status(kube::kinds::user, u.meta.namespace_, u.meta.name, updated);
        if (!w) {
            return reconcile_result::failed(w.error());
        }
    }
    if (outcome.failure && outcome.failure->transient) {
        return reconcile_result::failed(*outcome.failure);
    }
    if (outcome.requeue > 0ms) {
        return reconcile_result::after(outcome.requeue);
    }
    return reconcile_result::done();
}

reconcile_result user_reconciler::finalize(context& ctx) {
    const auto& u = ctx.user;
    if (!u.meta.has_finalizer(api::user_finalizer)) {
        return reconcile_result::done();
    }
    std::string why;
    if (u.skip_finalizer()) {
        why = fmt::format("annotation {}=true: Kafka left untouched",
                          api::skip_finalizer_annotation);
    } else if (reconciliation_paused(u.meta)) {
        why = fmt::format("annotation {}=true: Kafka left untouched", pause_annotation);
    } else {
        auto cluster = _api.get(kube::kinds::cluster, u.meta.namespace_, u.spec.cluster_name);
        if (!cluster && cluster.error().is_not_found()) {
            why = fmt::format("Cluster {} no longer exists: nothing to revoke",
                              u.spec.cluster_name);
        } else if (!cluster) {
            return reconcile_result::failed(cluster.error());
        } else {
            auto c = api::parse_cluster(cluster.value());
            if (!c) {
                return reconcile_result::failed(c.error());
            }
            auto admin = connect_as_operator(_api, _admins, c.value(), _bootstrap_override);
            result<void> revoked = ok();
            if (!admin) {
                revoked = admin.error();
            } else {
                // The SCRAM credential whatever the type (a pass may have been cut short
                // between applying one type and removing the other) and the principal's ACLs.
                revoked = revoke(*admin.value(), u.meta.name, true,
                                 api::principal_name(u.spec.authentication, u.meta.name));
            }
            if (!revoked) {
                auto message = fmt::format(
                    "cannot remove the credentials and ACLs of {}: {} (annotate with {}=true to "
                    "remove the resource anyway)",
                    u.meta.name, revoked.error().message, api::skip_finalizer_annotation);
                return sync_status(ctx, {step_outcome::kind::report, false,
                                         status::reasons::admin_error, message, revoked.error()});
            }
            why = "SCRAM credential and ACLs removed";
        }
    }
    if (auto r = remove_finalizer(_api, kube::kinds::user, u.meta, api::user_finalizer); !r) {
        return reconcile_result::failed(r.error());
    }
    log::get("user")->info("{}/{}: finalizer removed ({})", u.meta.namespace_, u.meta.name, why);
    return reconcile_result::done();
}

}  // namespace spool::op::reconcilers
