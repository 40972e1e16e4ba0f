#pragma once

// The one line a supervisor shows for a broker that refused to start: Kubernetes reads the file
// at the container's terminationMessagePath (/dev/termination-log unless the pod says otherwise)
// into status.containerStatuses[].state.terminated.message, where `kubectl describe pod` and the
// operator (operator/reconcilers/start_refusals.h: the UpgradeRefused condition) see it without
// reading the log.
//
// The path is the environment's SPOOL_TERMINATION_MESSAGE_PATH, else the kubelet's default: an
// environment variable rather than a broker property, because a refused configuration (exit
// status 2) is one of the reasons to report and no property of it can be trusted then.
//
// Written only to a file that exists: the kubelet creates it before the container starts, so
// outside Kubernetes (no /dev/termination-log) nothing is created and nothing happens. A file
// that cannot be opened or written is ignored: the log line the caller also writes is the record.

#include <string>
#include <string_view>

namespace spool::broker::app {

// The kubelet's default terminationMessagePath.
inline constexpr const char* default_termination_message_path = "/dev/termination-log";
inline constexpr const char* termination_message_path_env = "SPOOL_TERMINATION_MESSAGE_PATH";

// $SPOOL_TERMINATION_MESSAGE_PATH when set (empty: write nothing), else the default.
std::string termination_message_path();

// Kubernetes keeps at most 4096 bytes of a container's termination message.
inline constexpr size_t termination_message_limit = 4096;

// `text` with line breaks turned into spaces and cut to termination_message_limit bytes.
std::string termination_message_line(std::string_view text);

// Replaces the contents of the existing file `path` with termination_message_line(text).
// Returns whether it was written (false for an empty path, a missing or unwritable file).
bool write_termination_message(const std::string& path, std::string_view text);

}  // namespace spool::broker::app
