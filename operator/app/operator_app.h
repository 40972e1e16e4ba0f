#pragma once

// Composition root of spool-operator: builds the services in dependency order and stops them in
// reverse.
//
//   start: kube client -> metrics endpoint -> (CRDs) -> event recorder -> reconcilers ->
//          controllers (started at once, or when the leader Lease is won)
//   stop:  cancel API calls -> stop controllers (join) -> release the Lease -> metrics
//
// Threading: start() and stop() from the main thread; controllers and the elector run their
// own threads. `on_fatal` is called (from any thread) when leadership is lost: the process must
// exit, since another replica may already be acting.

#include "operator/app/options.h"
#include "operator/app/probe.h"
#include "operator/kube/client.h"
#include "operator/kube/leader_elector.h"
#include "operator/reconcilers/admin_client.h"
#include "operator/reconcilers/broker_health.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/controller.h"
#include "operator/reconcilers/event_recorder.h"
#include "operator/reconcilers/topic_reconciler.h"
#include "operator/reconcilers/user_reconciler.h"

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

namespace prometheus {
class Exposer;
}

namespace spool::op::app {

class operator_app {
public:
    explicit operator_app(options opts);
    ~operator_app();

    result<void> start(std::function<void()> on_fatal);
    void stop();

private:
    result<void> apply_crds();
    void start_controllers();

    options _opts;
    std::unique_ptr<kube::client> _api;
    std::unique_ptr<kube::client> _lease_api;  // own client: still usable after _api->cancel()
    std::unique_ptr<probe> _probe;
    std::unique_ptr<prometheus::Exposer> _exposer;
    std::unique_ptr<reconcilers::event_recorder> _events;
    std::unique_ptr<reconcilers::broker_health> _health;
    std::unique_ptr<reconcilers::admin_client_factory> _admins;
    std::unique_ptr<reconcilers::cluster_reconciler> _cluster_reconciler;
    std::unique_ptr<reconcilers::topic_reconciler> _topic_reconciler;
    std::unique_ptr<reconcilers::user_reconciler> _user_reconciler;
    std::unique_ptr<reconcilers::controller> _clusters;
    std::unique_ptr<reconcilers::controller> _topics;
    std::unique_ptr<reconcilers::controller> _users;
    std::unique_ptr<kube::leader_elector> _elector;
    std::thread _elector_thread;
    std::function<void()> _on_fatal;
    std::atomic<bool> _stopping{false};
};

}  // namespace spool::op::app
