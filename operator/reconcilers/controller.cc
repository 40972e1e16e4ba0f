#include "operator/reconcilers/controller.h"

#include "common/log.h"

namespace spool::op::reconcilers {

controller::controller(std::string name, kube::client& api, reconcile_fn reconcile,
                       controller_probe* probe)
    : _name(std::move(name)), _api(api), _reconcile(std::move(reconcile)), _probe(probe) {}

controller::~controller() {
    stop();
}

std::string controller::key_of(const json& object) {
    const json* meta = find(object, "metadata");
    if (!meta) {
        return {};
    }
    return get_string(*meta, "namespace") + "/" + get_string(*meta, "name");
}

void controller::watch(const kube::resource_kind& kind, const std::string& ns,
                       kube::list_options options, key_fn to_key) {
    _watchers.push_back(std::make_unique<kube::watcher>(
        _api, kind, ns, std::move(options),
        [this, to_key = std::move(to_key)](kube::event_type, const json& object) {
            if (std::string key = to_key(object); !key.empty()) {
                _queue.add(key);
                if (_probe) {
                    _probe->queue_depth(_name, _queue.depth());
                }
            }
        }));
}

void controller::resync_every(const kube::resource_kind& kind, const std::string& ns,
                              std::chrono::milliseconds period) {
    _resync = {&kind, ns, period};
}

void controller::resync_loop() {
    auto logger = log::get(_name);
    std::unique_lock lock(_stop_mutex);
    while (!_stop_cv.wait_for(lock, _resync.period, [this] { return _stopping; })) {
        lock.unlock();
        auto listed = _api.list(*_resync.kind, _resync.ns);
        if (!listed) {
            logger->warn("resync: list {}: {}", _resync.kind->plural, listed.error().message);
        } else {
            for (const auto& item : listed.value().items) {
                if (std::string key = key_of(item); !key.empty()) {
                    _queue.add(key);
                }
            }
            logger->debug("resync: {} {} queued", listed.value().items.size(),
                          _resync.kind->plural);
        }
        lock.lock();
    }
}

void controller::start() {
    for (auto& w : _watchers) {
        _threads.emplace_back([&w] { w->run(); });
    }
    if (_resync.kind && _resync.period.count() > 0) {
        _threads.emplace_back([this] { resync_loop(); });
    }
    _threads.emplace_back([this] { work(); });
}

void controller::stop() {
    {
        std::lock_guard lock(_stop_mutex);
        _stopping = true;
    }
    _stop_cv.notify_all();
    for (auto& w : _watchers) {
        w->stop();
    }
    _queue.shut_down();
    for (auto& t : _threads) {
        if (t.joinable()) {
            t.join();
        }
    }
    _threads.clear();
}

void controller::work() {
    auto logger = log::get(_name);
    while (auto key = _queue.get()) {
        auto start = std::chrono::steady_clock::now();
        reconcile_result r;
        try {
            r = _reconcile(*key);
        } catch (const std::exception& e) {
            // A bug, not a state of the world; still never crash the operator over one object.
            r = reconcile_result::failed(make_error("InternalError", e.what()));
        }
        std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        if (r.failure) {
            logger->warn("{}: {} ({}), retry #{}", *key, r.failure->message, r.failure->reason,
                         _queue.failures(*key) + 1);
            _queue.add_rate_limited(*key);
        } else {
            _queue.forget(*key);
            if (r.requeue_after) {
                _queue.add_after(*key, *r.requeue_after);
            }
        }
        _queue.done(*key);
        if (_probe) {
            _probe->reconciled(_name, took, !r.failure);
            _probe->queue_depth(_name, _queue.depth());
        }
    }
}

}  // namespace spool::op::reconcilers
