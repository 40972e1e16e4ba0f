#include "tests/fuzz/response_check.h"

#include "protocol/api/framing.h"
#include "protocol/messages/all.h"

#include <fmt/format.h>
#include <unistd.h>

#include <vector>

namespace spool::tests::fuzz {

namespace {

using protocol::type_list;

// The wire bytes: buffer runs with each file slice read in at its position.
std::string assemble(const spool::broker::net::response& r, std::vector<uint8_t>& out) {
    size_t pos = 0;
    for (size_t i = 0; i <= r.splices.size(); ++i) {
        size_t end = i < r.splices.size() ? r.splices[i].at : r.buffer.size();
        if (end < pos || end > r.buffer.size()) {
            return fmt::format("splice {} at {} outside the buffer", i, end);
        }
        out.insert(out.end(), r.buffer.begin() + static_cast<ptrdiff_t>(pos),
                   r.buffer.begin() + static_cast<ptrdiff_t>(end));
        pos = end;
        if (i == r.splices.size()) {
            break;
        }
        const auto& slice = r.splices[i].slice;
        size_t at = out.size();
        out.resize(at + slice.length);
        ssize_t n = ::pread(slice.file->fd(), out.data() + at, slice.length,
                            static_cast<off_t>(slice.offset));
        if (n != static_cast<ssize_t>(slice.length)) {
            return fmt::format("file slice {}+{} reads {} bytes", slice.offset, slice.length, n);
        }
    }
    return {};
}

template <class Response>
bool decodes(std::span<const uint8_t> body, int16_t version) {
    protocol::wire::reader r(body);
    Response msg;
    return msg.decode(r, version) && r.remaining() == 0;
}

template <class... P>
bool body_decodes(protocol::api_key key, std::span<const uint8_t> body, int16_t version,
                  type_list<P...>) {
    bool ok = false;
    (void)((key == P::response::api ? (ok = decodes<typename P::response>(body, version), true)
                                    : false) ||
           ...);
    return ok;
}

std::string check_at(protocol::api_key key, int16_t version, int32_t correlation,
                     std::span<const uint8_t> frame) {
    protocol::wire::reader r(frame);
    protocol::response_header header;
    if (!header.decode(r, protocol::response_header_version(key, version))) {
        return "response header does not decode";
    }
    if (header.correlation_id != correlation) {
        return fmt::format("correlation id {} answers request {}", header.correlation_id,
                           correlation);
    }
    if (!body_decodes(key, r.rest(), version, protocol::all_apis{})) {
        return fmt::format("{} v{} response body does not decode exactly", protocol::api_name(key),
                           version);
    }
    return {};
}

}  // namespace

std::string check_response(std::span<const uint8_t> request_frame,
                           const spool::broker::net::response& response) {
    auto req = protocol::parse_request(request_frame);
    if (!req) {
        return "answered a request whose header does not parse";
    }
    std::vector<uint8_t> wire;
    if (auto err = assemble(response, wire); !err.empty()) {
        return err;
    }
    if (wire.size() < 4) {
        return "response shorter than its size prefix";
    }
    uint32_t size = (uint32_t(wire[0]) << 24) | (uint32_t(wire[1]) << 16) |
                    (uint32_t(wire[2]) << 8) | uint32_t(wire[3]);
    if (size != wire.size() - 4 || size != response.size() - 4) {
        return fmt::format("size prefix {} for {} bytes", size, wire.size() - 4);
    }
    std::span<const uint8_t> frame(wire.data() + 4, wire.size() - 4);
    const auto key = req.value().key();
    const int16_t version = req.value().version();
    const int32_t correlation = req.value().header.correlation_id;
    auto err = check_at(key, version, correlation, frame);
    if (!err.empty() && key == protocol::api_key::api_versions) {
        // An unsupported ApiVersions version is answered in v0.
        if (check_at(key, 0, correlation, frame).empty()) {
            return {};
        }
    }
    return err;
}

std::optional<membership> joined_member(std::span<const uint8_t> request_frame,
                                        const spool::broker::net::response& response) {
    auto req = protocol::parse_request(request_frame);
    if (!req || req.value().key() != protocol::api_key::join_group || response.buffer.size() < 4) {
        return std::nullopt;
    }
    const int16_t version = req.value().version();
    protocol::wire::reader r(std::span<const uint8_t>(response.buffer).subspan(4));
    protocol::response_header header;
    protocol::join_group_response body;
    if (!header.decode(r, protocol::response_header_version(req.value().key(), version)) ||
        !body.decode(r, version) || body.member_id.empty()) {
        return std::nullopt;
    }
    auto error = static_cast<protocol::error_code>(body.error_code);
    if (error != protocol::error_code::none && error != protocol::error_code::member_id_required) {
        return std::nullopt;
    }
    return membership{body.member_id, body.generation_id};
}

}  // namespace spool::tests::fuzz
