#pragma once

// Request and response framing around the generated message codecs.
//
//     request frame  = int32 size | request header (v1, or v2 if flexible) | body
//     response frame = int32 size | response header (v0, or v1 if flexible; v0 for ApiVersions)
//                      | body
//
// The network layer strips the request size prefix and hands parse_request() the rest. The
// header version depends on the API and its version, read from the first four bytes. Bytes left
// after a body are ignored, as Kafka does: librdkafka 2.0.2 writes an extra tagged-field byte in
// ListGroups v3+ requests.
//
// All functions are pure; the returned views borrow the frame, which must outlive them.

#include "common/result.h"
#include "protocol/errors.h"
#include "protocol/messages/api_table.h"
#include "protocol/messages/headers.h"
#include "protocol/wire/reader.h"
#include "protocol/wire/writer.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace spool::protocol {

struct request_view {
    request_header header;
    int16_t header_version = 1;
    std::span<const uint8_t> body;  // into the frame

    [[nodiscard]] api_key key() const { return static_cast<api_key>(header.request_api_key); }
    [[nodiscard]] int16_t version() const { return header.request_api_version; }
};

// Parses the header of one request frame (size prefix already removed). Fails with
// INVALID_REQUEST on a truncated or malformed header or an API this codec does not know; the
// version is not checked here (ApiVersions must answer unsupported versions, see handlers).
result<request_view> parse_request(std::span<const uint8_t> frame);

// Decodes the body of `req` as Request. Fails with UNSUPPORTED_VERSION when the version is
// outside the codec's range, INVALID_REQUEST on a malformed body or a mismatched API key.
//
// memory_left (optional) is the budget of memory the decoded arrays may take (wire::reader's
// limit_memory); it is charged as the body decodes, and past it the decode fails with
// wire::read_error::too_large (in read_error_category, so callers can tell it apart).
template <class Request>
result<Request> decode_request(const request_view& req, size_t* memory_left = nullptr) {
    if (req.key() != Request::api) {
        return make_error_code(error_code::invalid_request);
    }
    wire::reader r(req.body);
    r.limit_memory(memory_left);
    Request out;
    if (!out.decode(r, req.version())) {
        if (r.error() == wire::read_error::too_large) {
            return wire::make_error_code(r.error());
        }
        return make_error_code(to_error_code(r.error(), decode_context::request));
    }
    return out;
}

// One encoded response: buffer bytes plus file slices to splice in (see wire::writer).
struct encoded_response {
    std::vector<uint8_t> bytes;
    std::vector<wire::splice> splices;

    // Size on the wire: buffer bytes plus every slice.
    [[nodiscard]] size_t wire_size() const {
        size_t n = bytes.size();
        for (const auto& s : splices) {
            n += s.slice.length;
        }
        return n;
    }
};

// Encodes size prefix, response header and body with one allocation. With splice_files the
// response's file slices are recorded rather than read into memory.
template <class Response>
encoded_response encode_response(int32_t correlation_id, int16_t version, const Response& body,
                                 bool splice_files = true) {
    response_header header;
    header.correlation_id = correlation_id;
    const int16_t header_version = response_header_version(Response::api, version);
    const size_t size = header.encoded_size(header_version) + body.encoded_size(version);
    encoded_response out;
    out.bytes.reserve(4 + size);
    wire::writer w(out.bytes, splice_files ? &out.splices : nullptr);
    w.write_i32(static_cast<int32_t>(size));
    header.encode(w, header_version);
    body.encode(w, version);
    return out;
}

// Encodes a request frame (size prefix, header, body); the admin client and tests use it.
template <class Request>
std::vector<uint8_t> encode_request(int32_t correlation_id, std::optional<std::string> client_id,
                                    int16_t version, const Request& body) {
    request_header header;
    header.request_api_key = static_cast<int16_t>(Request::api);
    header.request_api_version = version;
    header.correlation_id = correlation_id;
    header.client_id = std::move(client_id);
    const int16_t header_version = request_header_version(Request::api, version);
    const size_t size = header.encoded_size(header_version) + body.encoded_size(version);
    std::vector<uint8_t> out;
    out.reserve(4 + size);
    wire::writer w(out);
    w.write_i32(static_cast<int32_t>(size));
    header.encode(w, header_version);
    body.encode(w, version);
    return out;
}

}  // namespace spool::protocol
