#pragma once

// spool-broker's exit statuses (docs/runbook.md "Broker exit statuses"). A supervisor
// (Kubernetes, systemd) restarts the broker in every case but 0 and 2; 4 says the disk needs
// looking at first, 5 that the binary is too old or too new for the cluster's metadata.

namespace spool::broker::app::exit_status {

// Stopped by SIGTERM/SIGINT after a clean shutdown (the clean-shutdown marker written).
inline constexpr int ok = 0;
// Could not start: the reason is the last log line ("cannot start: ...").
inline constexpr int start_failed = 1;
// The command line or the configuration was refused (nothing started).
inline constexpr int config_refused = 2;
// A shutdown overran spool.shutdown.exit.timeout.ms (shutdown_watchdog.h): no clean marker.
inline constexpr int shutdown_overrun = 3;
// The log dir failed (EIO, ENOSPC, ... on a write, fsync, truncate or checkpoint): the broker
// halted at once, as Kafka does when its last log dir fails (storage/log_dir_failure.h), after
// ending its etcd session. No clean marker: the next start recovers the logs.
inline constexpr int log_dir_failed = 4;
// The cluster's finalized metadata.version (or another feature level) is one this binary does
// not support (broker/metadata/features.h, docs/upgrades.md): run a binary that supports it. A
// restart changes nothing, so a supervisor shows a crash loop with this status.
inline constexpr int feature_level_unsupported = 5;

}  // namespace spool::broker::app::exit_status
