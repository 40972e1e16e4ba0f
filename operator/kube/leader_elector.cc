#include "operator/kube/leader_elector.h"

#include "common/log.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace spool::op::kube {

std::string micro_time_now() {
    auto now = std::chrono::system_clock::now();
    auto secs = std::chrono::floor<std::chrono::seconds>(now);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now - secs).count();
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:06d}Z", secs, micros);
}

std::string time_now() {
    auto secs = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", secs);
}

bool leader_elector::wait(std::chrono::milliseconds d) {
    std::unique_lock lock(_mutex);
    return !_wake.wait_for(lock, d, [&] { return _stopping.load(); });
}

void leader_elector::stop() {
    _stopping = true;
    std::lock_guard lock(_mutex);
    _wake.notify_all();
}

bool leader_elector::try_acquire_or_renew() {
    auto logger = log::get("leader");
    auto now_steady = std::chrono::steady_clock::now();
    auto current = _api.get(kinds::lease, _cfg.namespace_, _cfg.name);
    if (!current && current.error().is_not_found()) {
        json lease =
            obj({{"apiVersion", str("coordination.k8s.io/v1")},
                 {"kind", str("Lease")},
                 {"metadata", obj({{"name", str(_cfg.name)}, {"namespace", str(_cfg.namespace_)}})},
                 {"spec", obj({{"holderIdentity", str(_cfg.identity)},
                               {"leaseDurationSeconds", num(_cfg.lease_duration.count())},
                               {"acquireTime", str(micro_time_now())},
                               {"renewTime", str(micro_time_now())},
                               {"leaseTransitions", num(0)}})}});
        auto created = _api.create(kinds::lease, _cfg.namespace_, lease);
        if (!created) {
            logger->debug("create lease: {}", created.error().message);
        }
        return static_cast<bool>(created);
    }
    if (!current) {
        logger->warn("get lease {}/{}: {}", _cfg.namespace_, _cfg.name, current.error().message);
        return false;
    }
    json lease = current.value();
    json spec = lease.has_field("spec") ? lease.at("spec") : json::object();
    std::string holder = get_string(spec, "holderIdentity");
    std::string record = holder + "|" + get_string(spec, "renewTime");
    if (record != _observed_record) {
        _observed_record = record;
        _observed_at = now_steady;
    }
    auto duration =
        std::chrono::seconds(get_int(spec, "leaseDurationSeconds", _cfg.lease_duration.count()));
    bool held_by_other = !holder.empty() && holder != _cfg.identity;
    if (held_by_other && now_steady < _observed_at + duration) {
        return false;
    }
    if (holder != _cfg.identity) {
        spec["acquireTime"] = str(micro_time_now());
        spec["leaseTransitions"] = num(get_int(spec, "leaseTransitions") + 1);
    }
    spec["holderIdentity"] = str(_cfg.identity);
    spec["leaseDurationSeconds"] = num(_cfg.lease_duration.count());
    spec["renewTime"] = str(micro_time_now());
    lease["spec"] = spec;
    auto updated = _api.replace(kinds::lease, _cfg.namespace_, _cfg.name, lease);
    if (!updated) {
        logger->debug("update lease: {}", updated.error().message);
        return false;
    }
    return true;
}

void leader_elector::release() {
    if (!_leading) {
        return;
    }
    auto current = _api.get(kinds::lease, _cfg.namespace_, _cfg.name);
    if (!current) {
        return;
    }
    json lease = current.value();
    if (get_string(lease.at("spec"), "holderIdentity") != _cfg.identity) {
        return;
    }
    lease["spec"]["holderIdentity"] = str("");
    lease["spec"]["leaseDurationSeconds"] = num(1);
    if (auto r = _api.replace(kinds::lease, _cfg.namespace_, _cfg.name, lease); !r) {
        log::get("leader")->warn("release lease: {}", r.error().message);
    }
    _leading = false;
}

void leader_elector::run(const std::function<void()>& on_started,
                         const std::function<void()>& on_stopped) {
    auto logger = log::get("leader");
    logger->info("{} waiting for lease {}/{}", _cfg.identity, _cfg.namespace_, _cfg.name);
    while (!_stopping && !_leading) {
        if (try_acquire_or_renew()) {
            _leading = true;
            logger->info("{} became leader", _cfg.identity);
            on_started();
            break;
        }
        if (!wait(_cfg.retry_period)) {
            return;
        }
    }
    auto last_renew = std::chrono::steady_clock::now();
    while (_leading && wait(_cfg.retry_period)) {
        if (try_acquire_or_renew()) {
            last_renew = std::chrono::steady_clock::now();
        } else if (std::chrono::steady_clock::now() - last_renew > _cfg.renew_deadline) {
            logger->error("{} could not renew the lease within {} s: leadership lost",
                          _cfg.identity, _cfg.renew_deadline.count());
            _leading = false;
            on_stopped();
            return;
        }
    }
    if (_leading) {
        release();
        on_stopped();
    }
}

}  // namespace spool::op::kube
