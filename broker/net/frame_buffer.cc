#include "broker/net/frame_buffer.h"

#include <algorithm>
#include <cstdint>

namespace spool::broker::net {

size_t frame_buffer::allocated_bytes() const {
    if (_is_contiguous) {
        return _contiguous.capacity();
    }
    size_t freed = 0;  // chunks linearise() copied already
    for (size_t i = 0; i < _linearised; ++i) {
        freed += _chunks[i].capacity;
    }
    return _contiguous.capacity() + _chunked - freed;
}

bool frame_buffer::linearise(size_t max_bytes) {
    if (_is_contiguous) {
        return true;
    }
    // reserve() then insert(): the bytes are copied once, without zero-filling the buffer first.
    _contiguous.reserve(_size);
    size_t copied = 0;
    while (_linearised < _chunks.size() && _contiguous.size() < _received && copied < max_bytes) {
        auto& c = _chunks[_linearised++];
        size_t length = std::min(c.capacity, _received - _contiguous.size());
        _contiguous.insert(_contiguous.end(), c.data.get(), c.data.get() + length);
        c.data.reset();
        copied += length;
    }
    _copied = _contiguous.size();
    if (_contiguous.size() < _received) {
        return false;
    }
    std::vector<chunk>().swap(_chunks);
    _chunked = _fill = _fill_start = _linearised = 0;
    // The tail is about to be read over; zero-filling it costs what the reader always paid.
    _contiguous.resize(_size);
    _is_contiguous = true;
    return true;
}

std::vector<boost::asio::mutable_buffer> frame_buffer::prepare(size_t ready) {
    std::vector<boost::asio::mutable_buffer> out;
    size_t n = std::min(ready, missing());
    if (n == 0) {
        return out;
    }
    if (must_linearise(n) || _linearised > 0) {
        linearise(SIZE_MAX);
    }
    if (_is_contiguous) {
        out.emplace_back(_contiguous.data() + _received, n);
        return out;
    }
    // Room left in the chunks already there first (a short read leaves some), then new chunks.
    size_t end = _received + n;
    size_t pos = _received;
    for (size_t i = _fill, start = _fill_start;
         i < _chunks.size() && pos < end && out.size() < max_buffers;
         start += _chunks[i].capacity, ++i) {
        size_t offset = pos - start;
        size_t length = std::min(_chunks[i].capacity - offset, end - pos);
        out.emplace_back(_chunks[i].data.get() + offset, length);
        pos += length;
    }
    while (pos < end && out.size() < max_buffers) {
        size_t capacity = std::clamp(std::max(end - pos, _chunked), min_chunk_bytes, chunk_bytes);
        capacity = std::min(capacity, _size - _chunked);
        _chunks.push_back({std::make_unique_for_overwrite<uint8_t[]>(capacity), capacity});
        _chunked += capacity;
        size_t length = std::min(capacity, end - pos);
        out.emplace_back(_chunks.back().data.get(), length);
        pos += length;
    }
    return out;
}

void frame_buffer::commit(size_t n) {
    _received += n;
    while (_fill < _chunks.size() && _received >= _fill_start + _chunks[_fill].capacity) {
        _fill_start += _chunks[_fill].capacity;
        ++_fill;
    }
}

std::vector<uint8_t> frame_buffer::release() {
    if (!_is_contiguous) {
        linearise(SIZE_MAX);  // only a frame of size 0 gets here uncopied
    }
    _contiguous.resize(_received);
    _is_contiguous = false;
    _size = _received = _copied = 0;
    return std::move(_contiguous);
}

}  // namespace spool::broker::net
