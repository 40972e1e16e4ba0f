// spool-broker: parse the command line and the configuration, start the broker, wait for
// SIGTERM/SIGINT, stop it. Everything else lives in broker_app. Exit statuses: exit_status.h
// (0 stopped cleanly, 1 could not start, 2 configuration refused, 3 shutdown overran its bound,
// 4 the log dir failed and the broker halted, 5 the cluster's feature levels are too new). A
// refusal to start (1, 2, 5) is also the termination message (termination_message.h).

#include "broker/app/broker_app.h"
#include "broker/app/exit_status.h"
#include "broker/app/termination_message.h"
#include "broker/config/cli.h"
#include "common/log.h"
#include "common/version.h"

#include <fmt/format.h>

#include <csignal>
#include <iostream>

int main(int argc, char** argv) {
    using namespace spool::broker;
    std::string error;
    auto cl = config::parse_command_line(argc, argv, &error);
    if (!cl) {
        std::cerr << "spool-broker: " << error << "\n";
        return app::exit_status::config_refused;
    }
    if (cl->show_help) {
        std::cout << cl->help_text;
        return 0;
    }
    if (cl->show_version) {
        std::cout << "spool-broker " << spool::version_string << "\n";
        return 0;
    }
    if (cl->print_config_docs) {
        std::cout << config::render_config_docs();
        return 0;
    }
    spool::log::set_level(cl->log_level);
    auto cfg = config::broker_config::load(cl->config_path, cl->overrides, &error);
    if (!cfg) {
        std::cerr << "spool-broker: configuration refused: " << error << "\n";
        app::write_termination_message(app::termination_message_path(),
                                       fmt::format("spool-broker {}: configuration refused: {}",
                                                   spool::version_string, error));
        return app::exit_status::config_refused;
    }

    // Block the stop signals in every thread (the shards inherit this mask) and take them
    // synchronously here.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    app::broker_app broker(std::move(cfg));
    if (auto err = broker.start(); !err.empty()) {
        spool::log::get("app")->error("cannot start: {}", err);
        const int status = broker.refused_feature_level()
                               ? app::exit_status::feature_level_unsupported
                               : app::exit_status::start_failed;
        // "refusing to start: the cluster's metadata.version is ..." for status 5, which the
        // operator turns into the Cluster's UpgradeRefused condition.
        app::write_termination_message(
            app::termination_message_path(),
            fmt::format("spool-broker {}: cannot start: {}", spool::version_string, err));
        return status;
    }
    int sig = 0;
    sigwait(&stop_signals, &sig);
    spool::log::get("app")->info("received {}, shutting down",
                                 sig == SIGTERM ? "SIGTERM" : "SIGINT");
    broker.stop();
    spool::log::get("app")->info("stopped");
    return app::exit_status::ok;
}
