#include "protocol/wire/tagged_fields.h"

namespace spool::protocol::wire {

void unknown_tagged_fields::append(uint32_t tag, std::span<const uint8_t> value) {
    writer w(_raw);
    w.write_uvarint(tag);
    w.write_uvarint(value.size());
    w.write_bytes(value);
    ++_count;
}

void unknown_tag_cursor::write_below(writer& w, uint32_t tag) {
    while (_r.remaining() > 0) {
        reader peek = _r;
        if (peek.read_uvarint() >= tag) {
            return;
        }
        const uint8_t* start = _r.position();
        (void)_r.read_uvarint();
        _r.skip(_r.read_uvarint());
        w.write_bytes({start, static_cast<size_t>(_r.position() - start)});
    }
}

}  // namespace spool::protocol::wire
