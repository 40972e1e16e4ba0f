#pragma once

// Level-based reconciler for User resources (users.spool.dev), in the Topic reconciler's shape:
// an ordered list of small named steps, each continuing or stopping the pass with a verdict for
// status:
//
//   pause -> validate -> finalizer -> cluster -> connect -> previous -> credentials -> secret
//   -> acls -> (status)
//
//   pause       spool.dev/pause-reconciliation=true: nothing is written; ReconciliationPaused.
//   validate    spec (authentication type, ACL names); InvalidSpec.
//   finalizer   make sure spool.dev/user is set before anything exists in Kafka.
//   cluster     the Cluster exists (ClusterNotFound otherwise, looked at again in 30 s).
//   connect     an admin client on the Cluster's bootstrap address.
//   previous    the authentication type changed (status.authentication): the old type's SCRAM
//               credential and the old principal's ACLs are removed.
//   credentials scram-sha-512: the password (spec.authentication.password's Secret, else the one
//               already in the User's Secret, else a generated one) is upserted with
//               AlterUserScramCredentials (random salt, 4096 iterations) when Kafka has no
//               SCRAM-SHA-512 credential for the user or the password differs from the one the
//               Secret holds; tls: a client certificate CN=<name> signed by the clients CA in
//               Secret <cluster>-clients-ca (ca.crt, ca.key), re-issued when the CA changed, the
//               subject differs or it expires within 30 days; WaitingForClientsCA until that
//               Secret exists.
//   secret      the Secret named after the User (owned by it, so it goes with it): username,
//               password, sasl.jaas.config, or user.crt, user.key, ca.crt; written only when
//               its data changed. A Secret of that name the operator does not own is left
//               alone (SecretConflict).
//   acls        the principal's ACLs (User:<name>, or User:CN=<name> for tls) made equal to
//               spec.authorization.acls: DescribeAcls, CreateAcls of the missing bindings,
//               DeleteAcls of the extra ones; nothing is sent when they agree.
//   (status)    Ready, status.secret, status.username, status.authentication,
//               observedGeneration; written only when it changed.
//
// Deletion (finalize): the SCRAM credential and every ACL of the principal are removed, then
// the finalizer; the Secret goes with its owner (garbage collection). The skip-finalizer
// annotation, a paused User or a Cluster that no longer exists drop the finalizer without
// touching Kafka.
//
// A password Secret named in spec is read on every pass: a change is applied at the next pass
// (the controller's resync, any edit of the User, or at once when the Secret carries the label
// spool.dev/user=<User>, which the operator watches).

#include "operator/api/cluster.h"
#include "operator/api/topic.h"  // skip_finalizer_annotation
#include "operator/api/user.h"
#include "operator/kube/client.h"
#include "operator/reconcilers/admin_client.h"
#include "operator/reconcilers/controller.h"
#include "operator/reconcilers/event_recorder.h"
#include "operator/status/conditions.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::reconcilers {

class user_reconciler {
public:
    // `bootstrap_override` (tests, out-of-cluster runs) replaces the Cluster's in-cluster
    // bootstrap address when not empty.
    user_reconciler(kube::client& api, event_recorder& events, admin_client_factory& admins,
                    std::string bootstrap_override = {});

    reconcile_result reconcile(const std::string& key);

    static std::vector<std::string> step_names();

    // Every binding the spec asks for (one per operation), sorted, for principal `principal`.
    static std::vector<acl_binding> wanted_acls(const api::user& u, const std::string& principal);
    // The Secret holding a Cluster's clients CA.
    static std::string clients_ca_secret(const std::string& cluster);
    // Days a user certificate is valid, and how close to its end it is re-issued.
    static constexpr int certificate_days = 365;
    static constexpr int renew_before_days = 30;

private:
    struct context;
    struct step_outcome {
        enum class kind { next, report, hold, settled } what = kind::next;
        bool ready = false;
        status::reason why{status::reasons::user_ready};
        std::string message;
        std::optional<error> failure;
        std::chrono::milliseconds requeue{0};
    };
    using step_fn = step_outcome (user_reconciler::*)(context&);
    struct step {
        const char* name;
        step_fn run;
    };
    static const std::vector<step>& steps();

    step_outcome check_pause(context& ctx);
    step_outcome validate(context& ctx);
    step_outcome ensure_finalizer(context& ctx);
    step_outcome read_cluster(context& ctx);
    step_outcome connect(context& ctx);
    step_outcome remove_previous(context& ctx);
    step_outcome credentials(context& ctx);
    step_outcome scram_credentials(context& ctx);
    step_outcome tls_credentials(context& ctx);
    step_outcome write_secret(context& ctx);
    step_outcome sync_acls(context& ctx);
    step_outcome ready(context& ctx);

    // Removes user_name's SCRAM credential (when `scram`) and acl_principal's ACLs (none when
    // it is empty).
    result<void> revoke(admin_client& admin, const std::string& user_name, bool scram,
                        const std::string& acl_principal);
    reconcile_result finalize(context& ctx);
    reconcile_result sync_status(context& ctx, const step_outcome& outcome);
    // A Secret's data, decoded; empty when it has none.
    static std::map<std::string, std::string> secret_data(const json& secret);

    kube::client& _api;
    event_recorder& _events;
    admin_client_factory& _admins;
    std::string _bootstrap_override;
};

}  // namespace spool::op::reconcilers
