#include "broker/coordinator/consumer_protocol.h"

#include "protocol/wire/reader.h"

namespace spool::broker::coordinator {

std::optional<std::vector<std::string>> parse_subscription_topics(const bytes& metadata) {
    protocol::wire::reader r(metadata);
    int16_t version = r.read_i16();
    int32_t count = r.read_i32();
    if (!r.ok() || version < 0 || count < 0 || !r.can_hold(static_cast<uint64_t>(count), 2)) {
        return std::nullopt;
    }
    std::vector<std::string> topics;
    topics.reserve(static_cast<size_t>(count));
    for (int32_t i = 0; i < count; ++i) {
        int16_t len = r.read_i16();
        if (len < 0) {
            return std::nullopt;
        }
        topics.emplace_back(r.read_string_view(static_cast<size_t>(len)));
    }
    if (!r.ok()) {
        return std::nullopt;
    }
    return topics;
}

}  // namespace spool::broker::coordinator
