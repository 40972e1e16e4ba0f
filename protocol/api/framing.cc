#include "protocol/api/framing.h"

namespace spool::protocol {

result<request_view> parse_request(std::span<const uint8_t> frame) {
    wire::reader peek(frame);
    const int16_t key = peek.read_i16();
    const int16_t version = peek.read_i16();
    if (!peek.ok() || find_api(key) == nullptr) {
        return make_error_code(error_code::invalid_request);
    }
    request_view out;
    out.header_version = request_header_version(static_cast<api_key>(key), version);
    wire::reader r(frame);
    if (!out.header.decode(r, out.header_version)) {
        return make_error_code(error_code::invalid_request);
    }
    out.body = r.rest();
    return out;
}

}  // namespace spool::protocol
