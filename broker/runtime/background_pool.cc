#include "broker/runtime/background_pool.h"

#include "common/log.h"
#include "common/queued_log_sink.h"

#include <pthread.h>

namespace spool::broker::runtime {

background_pool::background_pool(std::string name, size_t threads, thread_priority priority) {
    _work.emplace(_ctx.get_executor());
    for (size_t i = 0; i < std::max<size_t>(1, threads); ++i) {
        _threads.emplace_back([this, name, i, priority] {
            auto thread_name = (name + "-" + std::to_string(i)).substr(0, 15);
            pthread_setname_np(pthread_self(), thread_name.c_str());
            set_this_thread_priority(priority);
            try {
                _ctx.run();
            } catch (const std::exception& e) {
                log::get("net")->critical("{} stopped by an exception: {}", thread_name, e.what());
                log::flush();
                std::terminate();
            }
        });
    }
}

background_pool::~background_pool() {
    stop();
}

void background_pool::stop() {
    if (!_work) {
        return;
    }
    // Let what is queued finish (a metadata write, a cleaning pass told to cancel), then join.
    _work.reset();
    for (auto& t : _threads) {
        if (t.joinable()) {
            t.join();
        }
    }
    _ctx.stop();
}

}  // namespace spool::broker::runtime
