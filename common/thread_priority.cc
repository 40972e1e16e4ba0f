#include "common/thread_priority.h"

#include "common/log.h"

#include <atomic>

#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace spool {

namespace {

#if defined(__linux__)
// <linux/ioprio.h> is not always installed: the ABI values.
constexpr int ioprio_class_shift = 13;
constexpr int ioprio_class_be = 2;
constexpr int ioprio_class_idle = 3;
constexpr int ioprio_who_process = 1;

int set_io_priority(int io_class, int level) {
    // who = 0 with IOPRIO_WHO_PROCESS: the calling thread.
    return static_cast<int>(
        ::syscall(SYS_ioprio_set, ioprio_who_process, 0, (io_class << ioprio_class_shift) | level));
}
#endif

void warn_once(const char* what, int err) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
        log::get("runtime")->warn(
            "cannot lower the priority of background threads ({}: {}); they compete with the "
            "shards as equals",
            what, std::strerror(err));
    }
}

}  // namespace

void set_this_thread_priority(thread_priority p) {
#if defined(__linux__)
    switch (p) {
        case thread_priority::normal:
            return;
        case thread_priority::background: {
            // PRIO_PROCESS with a thread id (0: the caller) sets that one thread's nice value.
            if (::setpriority(PRIO_PROCESS, 0, 19) != 0) {
                warn_once("setpriority", errno);
            }
            if (set_io_priority(ioprio_class_be, 7) != 0) {
                warn_once("ioprio_set", errno);
            }
            return;
        }
        case thread_priority::idle: {
            sched_param param{};
            if (::sched_setscheduler(0, SCHED_IDLE, &param) != 0) {
                warn_once("sched_setscheduler(SCHED_IDLE)", errno);
            }
            if (set_io_priority(ioprio_class_idle, 0) != 0) {
                warn_once("ioprio_set", errno);
            }
            return;
        }
    }
#else
    (void)p;
#endif
}

}  // namespace spool
