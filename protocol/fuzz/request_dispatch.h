#pragma once

// Decodes a request frame (size prefix removed) by its header's api key and version, then checks
// the codec's own invariants on whatever decoded: encoded_size() matches the bytes written, and
// re-encoding then decoding again gives the same message. Shared by the fuzz target and its
// seed writer; returns false when the frame is refused (that is fine), aborts on a broken
// invariant (that is a bug).

#include "protocol/api/framing.h"
#include "protocol/messages/all.h"

#include <cstdlib>
#include <span>
#include <vector>

namespace spool::protocol::fuzz {

template <class Request>
bool check_request(const request_view& req) {
    auto decoded = decode_request<Request>(req);
    if (!decoded.has_value()) {
        return false;
    }
    const Request& msg = decoded.value();
    std::vector<uint8_t> bytes;
    wire::writer w(bytes);
    msg.encode(w, req.version());
    if (bytes.size() != msg.encoded_size(req.version())) {
        std::abort();
    }
    Request again;
    wire::reader r(bytes);
    if (!again.decode(r, req.version()) || r.remaining() != 0 || !(again == msg)) {
        std::abort();
    }
    return true;
}

template <class... P>
bool dispatch_request(const request_view& req, type_list<P...>) {
    bool ok = false;
    (void)((req.key() == P::request::api ? (ok = check_request<typename P::request>(req), true)
                                         : false) ||
           ...);
    return ok;
}

inline bool decode_request_frame(std::span<const uint8_t> frame) {
    auto req = parse_request(frame);
    if (!req.has_value()) {
        return false;
    }
    return dispatch_request(req.value(), all_apis{});
}

}  // namespace spool::protocol::fuzz
