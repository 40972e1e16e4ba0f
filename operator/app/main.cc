// spool-operator: runs Spool clusters on Kubernetes from Cluster and Topic resources.

#include "common/log.h"
#include "common/version.h"
#include "operator/app/operator_app.h"
#include "operator/app/options.h"

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <iostream>

int main(int argc, char** argv) {
    int exit_code = 0;
    auto opts = spool::op::app::parse_options(argc, argv, exit_code);
    if (!opts) {
        return exit_code;
    }
    if (opts->version) {
        std::cout << "spool-operator " << spool::version_string << "\n";
        return 0;
    }
    spool::log::set_level(opts->log_level);
    auto logger = spool::log::get("operator");

    // Signals go to sigwait below, not to whichever thread happens to run.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGUSR1);  // sent to ourselves when leadership is lost
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    spool::op::app::operator_app app(*opts);
    std::atomic<bool> lost{false};
    if (auto r = app.start([&] {
            lost = true;
            ::kill(::getpid(), SIGUSR1);
        });
        !r) {
        logger->error("cannot start: {}", r.error().message);
        return 1;
    }
    int sig = 0;
    sigwait(&signals, &sig);
    logger->info("stopping ({})", lost ? "leadership lost" : strsignal(sig));
    app.stop();
    return lost ? 1 : 0;
}
