#pragma once

// Reads a broker response the way a client does and says what is wrong with it: the size prefix
// must count every byte (buffer and file slices, read from the log files as sendfile would),
// the correlation id must be the request's, and the body must decode at the request's version
// with nothing left over. ApiVersions may answer an unsupported version in v0 (KIP-511).
//
// Threading: pure apart from reading the slices' files; any thread.

#include "broker/net/dispatcher.h"
#include "tests/fuzz/request_clamps.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace spool::tests::fuzz {

// Empty when the response is well-formed; `request_frame` is the request without size prefix.
std::string check_response(std::span<const uint8_t> request_frame,
                           const spool::broker::net::response& response);

// The member id and generation a (well-formed) JoinGroup answer gave, if it gave one.
std::optional<membership> joined_member(std::span<const uint8_t> request_frame,
                                        const spool::broker::net::response& response);

}  // namespace spool::tests::fuzz
