#include "operator/kube/watcher.h"

#include "common/log.h"
#include "operator/kube/backoff.h"

namespace spool::op::kube {

std::string watcher::resource_version() const {
    std::lock_guard lock(_mutex);
    return _rv;
}

bool watcher::sleep_for(std::chrono::milliseconds d) {
    std::unique_lock lock(_mutex);
    return !_wake.wait_for(lock, d, [&] { return _stopping.load(); });
}

void watcher::stop() {
    _stopping = true;
    std::lock_guard lock(_mutex);
    _wake.notify_all();
}

void watcher::run() {
    auto logger = log::get("watch");
    backoff delays(std::chrono::milliseconds(200), std::chrono::seconds(30));
    bool need_list = _resume.empty();
    {
        std::lock_guard lock(_mutex);
        _rv = _resume;
    }
    while (!_stopping) {
        if (need_list) {
            auto listed = _api.list(_kind, _ns, _options);
            if (!listed) {
                logger->warn("list {}: {}", _kind.plural, listed.error().message);
                if (!sleep_for(delays.next())) {
                    break;
                }
                continue;
            }
            ++_lists;
            for (const auto& item : listed.value().items) {
                _on_object(event_type::added, item);
            }
            std::lock_guard lock(_mutex);
            _rv = listed.value().resource_version;
            need_list = false;
        }
        auto watched = _api.watch(_kind, _ns, _options, resource_version(), _timeout,
                                  [&](const watch_event& e) {
                                      if (e.type != event_type::bookmark) {
                                          _on_object(e.type, e.object);
                                      }
                                      delays.reset();
                                      return !_stopping.load();
                                  });
        if (watched) {
            std::lock_guard lock(_mutex);
            _rv = watched.value();
            continue;
        }
        if (_stopping) {
            break;
        }
        if (watched.error().is_gone()) {
            // The version was compacted away; only a fresh list gives a consistent view.
            ++_expirations;
            logger->info("watch {} expired ({}), listing again", _kind.plural,
                         watched.error().message);
            need_list = true;
            continue;
        }
        logger->warn("watch {}: {}", _kind.plural, watched.error().message);
        if (!sleep_for(delays.next())) {
            break;
        }
    }
}

}  // namespace spool::op::kube
