#include "broker/net/frame_buffer.h"

#include <algorithm>

namespace spool::broker::net {

size_t frame_buffer::allocated_bytes() const {
    return _is_contiguous ? _contiguous.capacity() : _chunked;
}

void frame_buffer::make_contiguous() {
    // reserve() then insert(): the bytes are copied once, without zero-filling the buffer first.
    _contiguous.reserve(_size);
    for (const auto& c : _chunks) {
        size_t length = std::min(c.capacity, _received - _contiguous.size());
        _contiguous.insert(_contiguous.end(), c.data.get(), c.data.get() + length);
    }
    _copied = _contiguous.size();
    std::vector<chunk>().swap(_chunks);
    _chunked = _fill = _fill_start = 0;
    // The tail is about to be read over; zero-filling it costs what the reader always paid.
    _contiguous.resize(_size);
    _is_contiguous = true;
}

std::vector<boost::asio::mutable_buffer> frame_buffer::prepare(size_t ready) {
    std::vector<boost::asio::mutable_buffer> out;
    size_t n = std::min(ready, missing());
    if (n == 0) {
        return out;
    }
    if (!_is_contiguous && _received + n == _size) {
        make_contiguous();
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
        make_contiguous();  // only a frame of size 0 gets here uncopied
    }
    _contiguous.resize(_received);
    _is_contiguous = false;
    _size = _received = _copied = 0;
    return std::move(_contiguous);
}

}  // namespace spool::broker::net
