#include "protocol/wire/records_field.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace spool::protocol {

void records_field::append_view(std::span<const uint8_t> bytes) {
    _null = false;
    if (_size == 0 && _parts.empty()) {
        _view = bytes;
    } else {
        _parts.emplace_back(bytes);
    }
    _size += bytes.size();
}

void records_field::append_owned(std::vector<uint8_t> bytes) {
    _null = false;
    _size += bytes.size();
    _parts.emplace_back(std::move(bytes));
}

void records_field::append_slice(const file_slice& slice) {
    _null = false;
    _size += slice.length;
    _parts.emplace_back(slice);
}

std::span<const uint8_t> records_field::bytes() const {
    if (_parts.empty()) {
        return _view;
    }
    if (_view.empty() && _parts.size() == 1) {
        if (const auto* v = std::get_if<std::vector<uint8_t>>(&_parts[0])) {
            return *v;
        }
        if (const auto* s = std::get_if<std::span<const uint8_t>>(&_parts[0])) {
            return *s;
        }
    }
    return {};
}

bool records_field::has_file_slices() const {
    return std::any_of(_parts.begin(), _parts.end(),
                       [](const part& p) { return std::holds_alternative<file_slice>(p); });
}

bool records_field::decode(wire::reader& r, bool flexible, bool nullable) {
    clear();
    int64_t len;
    if (flexible) {
        len = static_cast<int64_t>(r.read_uvarint()) - 1;
    } else {
        len = r.read_i32();
    }
    if (!r.ok()) {
        return false;
    }
    if (len < 0) {
        if (len < -1 || !nullable) {
            r.fail(len < -1 ? wire::read_error::bad_length : wire::read_error::unexpected_null);
            return false;
        }
        _null = true;
        return true;
    }
    auto bytes = r.read_bytes(static_cast<size_t>(len));
    if (!r.ok()) {
        return false;
    }
    _view = bytes;
    _size = bytes.size();
    return true;
}

void records_field::encode(wire::writer& w, bool flexible, bool nullable) const {
    if (_null && nullable) {
        if (flexible) {
            w.write_uvarint(0);
        } else {
            w.write_i32(-1);
        }
        return;
    }
    if (flexible) {
        w.write_uvarint(static_cast<uint64_t>(_size) + 1);
    } else {
        w.write_i32(static_cast<int32_t>(_size));
    }
    write_parts(w);
}

size_t records_field::encoded_size(bool flexible, bool nullable) const {
    if (_null && nullable) {
        return flexible ? 1 : 4;
    }
    return (flexible ? wire::writer::uvarint_size(static_cast<uint64_t>(_size) + 1) : 4) + _size;
}

void records_field::write_parts(wire::writer& w) const {
    w.write_bytes(_view);
    for (const auto& p : _parts) {
        if (const auto* v = std::get_if<std::span<const uint8_t>>(&p)) {
            w.write_bytes(*v);
        } else if (const auto* o = std::get_if<std::vector<uint8_t>>(&p)) {
            w.write_bytes(*o);
        } else {
            const auto& s = std::get<file_slice>(p);
            if (w.splices() != nullptr) {
                w.add_splice(s);
                continue;
            }
            // No splice list: copy the slice's bytes. Used by tests and tools, not on the
            // broker's fetch path, so a short read is a hard error.
            auto& buf = w.buffer();
            size_t at = buf.size();
            buf.resize(at + s.length);
            size_t done = 0;
            while (done < s.length) {
                ssize_t n = ::pread(s.file->fd(), buf.data() + at + done, s.length - done,
                                    static_cast<off_t>(s.offset + done));
                if (n < 0 && errno == EINTR) {
                    continue;
                }
                if (n <= 0) {
                    throw std::system_error(n < 0 ? errno : EIO, std::generic_category(),
                                            "records_field: reading file slice");
                }
                done += static_cast<size_t>(n);
            }
        }
    }
}

bool records_field::operator==(const records_field& other) const {
    if (_null != other._null || _size != other._size) {
        return false;
    }
    // Canonical form: in-memory bytes merged into runs, file slices kept as (file, range).
    using token = std::variant<std::vector<uint8_t>, file_slice>;
    auto canonical = [](const records_field& f) {
        std::vector<token> out;
        auto add_bytes = [&](std::span<const uint8_t> b) {
            if (b.empty()) {
                return;
            }
            if (out.empty() || !std::holds_alternative<std::vector<uint8_t>>(out.back())) {
                out.emplace_back(std::vector<uint8_t>());
            }
            auto& run = std::get<std::vector<uint8_t>>(out.back());
            run.insert(run.end(), b.begin(), b.end());
        };
        add_bytes(f._view);
        for (const auto& p : f._parts) {
            if (const auto* v = std::get_if<std::span<const uint8_t>>(&p)) {
                add_bytes(*v);
            } else if (const auto* o = std::get_if<std::vector<uint8_t>>(&p)) {
                add_bytes(*o);
            } else {
                out.emplace_back(std::get<file_slice>(p));
            }
        }
        return out;
    };
    auto a = canonical(*this);
    auto b = canonical(other);
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        const auto* sa = std::get_if<file_slice>(&a[i]);
        const auto* sb = std::get_if<file_slice>(&b[i]);
        if ((sa == nullptr) != (sb == nullptr)) {
            return false;
        }
        if (sa != nullptr) {
            if (sa->file != sb->file || sa->offset != sb->offset || sa->length != sb->length) {
                return false;
            }
        } else if (std::get<std::vector<uint8_t>>(a[i]) != std::get<std::vector<uint8_t>>(b[i])) {
            return false;
        }
    }
    return true;
}

}  // namespace spool::protocol
