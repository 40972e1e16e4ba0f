#pragma once

// Tagged fields a decoder does not know (a newer client's, or a version we do not model). They
// are kept in their wire form so that re-encoding a message reproduces the input byte for byte:
//
//     raw = { uvarint tag | uvarint size | size bytes }*     (in the order received)
//
// Keeping one flat buffer instead of a vector of (tag, bytes) bounds memory by the frame size
// even for a frame of millions of empty tagged fields.
//
// A value type owned by the decoded message; no threading concerns.

#include "protocol/wire/reader.h"
#include "protocol/wire/writer.h"

#include <cstdint>
#include <span>
#include <vector>

namespace spool::protocol::wire {

class unknown_tagged_fields {
public:
    [[nodiscard]] uint32_t count() const { return _count; }
    [[nodiscard]] size_t raw_size() const { return _raw.size(); }
    [[nodiscard]] bool empty() const { return _count == 0; }
    [[nodiscard]] std::span<const uint8_t> raw() const { return _raw; }

    void clear() {
        _count = 0;
        _raw.clear();
    }

    // Reserves exactly the space the unknown entries among the next `count` tagged fields of r
    // need (one allocation, at most the frame size), without moving r.
    template <class IsKnown>
    void reserve_for(const reader& r, uint32_t count, IsKnown is_known) {
        reader scan = r;
        size_t bytes = 0;
        for (uint32_t i = 0; i < count && scan.ok(); ++i) {
            const uint8_t* start = scan.position();
            uint32_t tag = scan.read_uvarint();
            scan.skip(scan.read_uvarint());
            if (scan.ok() && !is_known(tag)) {
                bytes += static_cast<size_t>(scan.position() - start);
            }
        }
        if (bytes > 0) {
            _raw.reserve(_raw.size() + bytes);
        }
    }

    void append(uint32_t tag, std::span<const uint8_t> value);

    // Calls fn(tag, value) for each entry in order.
    template <class Fn>
    void for_each(Fn fn) const {
        reader r(_raw);
        while (r.remaining() > 0 && r.ok()) {
            uint32_t tag = r.read_uvarint();
            auto value = r.read_bytes(r.read_uvarint());
            fn(tag, value);
        }
    }

    bool operator==(const unknown_tagged_fields&) const = default;

private:
    uint32_t _count = 0;
    std::vector<uint8_t> _raw;
};

// Interleaves unknown entries with the known tagged fields an encoder writes, keeping the
// ascending tag order the protocol asks for.
class unknown_tag_cursor {
public:
    explicit unknown_tag_cursor(const unknown_tagged_fields& f) : _r(f.raw()) {}

    // Writes the unknown entries whose tag is below `tag`.
    void write_below(writer& w, uint32_t tag);
    void write_rest(writer& w) { w.write_bytes(_r.rest()); }

private:
    reader _r;
};

}  // namespace spool::protocol::wire
