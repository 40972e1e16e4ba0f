#include "broker/coordinator/group_hash.h"

#include <limits>

namespace spool::broker::coordinator {

namespace {

// Decodes one UTF-8 code point starting at s[i]; advances i. Returns U+FFFD for bad input.
uint32_t next_code_point(std::string_view s, size_t& i) noexcept {
    constexpr uint32_t replacement = 0xfffd;
    auto b0 = static_cast<uint8_t>(s[i++]);
    if (b0 < 0x80) {
        return b0;
    }
    int extra = 0;
    uint32_t cp = 0;
    uint32_t min = 0;
    if ((b0 & 0xe0) == 0xc0) {
        extra = 1, cp = b0 & 0x1f, min = 0x80;
    } else if ((b0 & 0xf0) == 0xe0) {
        extra = 2, cp = b0 & 0x0f, min = 0x800;
    } else if ((b0 & 0xf8) == 0xf0) {
        extra = 3, cp = b0 & 0x07, min = 0x10000;
    } else {
        return replacement;
    }
    for (int k = 0; k < extra; ++k) {
        if (i >= s.size() || (static_cast<uint8_t>(s[i]) & 0xc0) != 0x80) {
            return replacement;
        }
        cp = (cp << 6) | (static_cast<uint8_t>(s[i++]) & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        return replacement;
    }
    return cp;
}

}  // namespace

int32_t java_string_hash(std::string_view s) noexcept {
    // Unsigned arithmetic wraps like Java's int overflow without undefined behaviour.
    uint32_t h = 0;
    for (size_t i = 0; i < s.size();) {
        uint32_t cp = next_code_point(s, i);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            h = 31 * h + (0xd800 + (cp >> 10));
            h = 31 * h + (0xdc00 + (cp & 0x3ff));
        } else {
            h = 31 * h + cp;
        }
    }
    return static_cast<int32_t>(h);
}

int32_t offsets_partition_for(std::string_view group_id, int32_t partitions) noexcept {
    int32_t h = java_string_hash(group_id);
    // org.apache.kafka.common.utils.Utils.abs: MIN_VALUE maps to 0 rather than staying negative.
    int32_t a = h == std::numeric_limits<int32_t>::min() ? 0 : (h < 0 ? -h : h);
    return a % partitions;
}

}  // namespace spool::broker::coordinator
