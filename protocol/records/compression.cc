#include "protocol/records/compression.h"

#include "protocol/records/errc.h"

#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace spool::protocol::records {

namespace {

constexpr size_t min_growth = 64 * 1024;

// A snappy copy element of 3 bytes emits at most 64 bytes; nothing expands more (~21.3x), so a
// block declaring more than this is lying and is refused before any allocation.
constexpr size_t snappy_max_expansion = 22;

constexpr uint8_t xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
constexpr size_t xerial_header_size = 16;
constexpr int32_t xerial_version = 1;
// snappy-java's default block size.
constexpr size_t xerial_chunk = 32 * 1024;

// zstd frames declare their window; the decoder allocates it. Producers use at most 2^23 (level
// 19); 2^24 leaves room without letting a 20-byte frame make us allocate the library's 128 MiB.
constexpr int zstd_window_log_max = 24;

// The limit the buffers grow to: one byte past the cap, so "exactly cap bytes" can be told from
// "more than cap" without a second probe.
size_t growth_limit(size_t cap) {
    return cap == SIZE_MAX ? cap : cap + 1;
}

std::error_code finish(const decompress_buffer& out, size_t cap) {
    return out.size() > cap ? make_error_code(errc::decompressed_too_large) : std::error_code{};
}

// ---- gzip -------------------------------------------------------------------------------------

struct inflate_stream {
    z_stream stream{};
    bool ready = false;

    inflate_stream() {
        // 15 + 32: a 32 KiB window with automatic gzip / zlib header detection.
        ready = inflateInit2(&stream, 15 + 32) == Z_OK;
    }
    ~inflate_stream() {
        if (ready) {
            inflateEnd(&stream);
        }
    }
    inflate_stream(const inflate_stream&) = delete;
    inflate_stream& operator=(const inflate_stream&) = delete;
};

std::error_code gunzip(std::span<const uint8_t> in, decompress_buffer& out, size_t cap) {
    thread_local inflate_stream cached;
    if (!cached.ready) {
        return errc::corrupt_message;
    }
    z_stream& s = cached.stream;
    inflateReset(&s);
    s.next_in = const_cast<Bytef*>(in.data());
    s.avail_in = static_cast<uInt>(in.size());
    const size_t limit = growth_limit(cap);
    for (;;) {
        if (out.spare() == 0 && !out.grow(limit)) {
            return errc::decompressed_too_large;
        }
        size_t room = std::min<size_t>(out.spare(), UINT_MAX);
        s.next_out = out.tail();
        s.avail_out = static_cast<uInt>(room);
        int rc = inflate(&s, Z_NO_FLUSH);
        out.commit(room - s.avail_out);
        if (rc == Z_STREAM_END) {
            if (s.avail_in == 0) {
                return finish(out, cap);
            }
            // Concatenated gzip members, as GZIPInputStream reads them.
            inflateReset(&s);
            continue;
        }
        if (rc == Z_BUF_ERROR && s.avail_out == 0) {
            continue;  // output full: grow and go on
        }
        if (rc != Z_OK) {
            return errc::corrupt_message;  // damaged data, or input ended mid-stream
        }
    }
}

std::error_code gzip(std::span<const uint8_t> in, std::vector<uint8_t>& out, int level) {
    z_stream s{};
    if (deflateInit2(&s, level == 0 ? Z_DEFAULT_COMPRESSION : level, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
        return errc::corrupt_message;
    }
    size_t start = out.size();
    size_t bound = deflateBound(&s, static_cast<uLong>(in.size()));
    out.resize(start + bound);
    s.next_in = const_cast<Bytef*>(in.data());
    s.avail_in = static_cast<uInt>(in.size());
    s.next_out = out.data() + start;
    s.avail_out = static_cast<uInt>(bound);
    int rc = deflate(&s, Z_FINISH);
    out.resize(start + (bound - s.avail_out));
    deflateEnd(&s);
    return rc == Z_STREAM_END ? std::error_code{} : make_error_code(errc::corrupt_message);
}

// ---- snappy -----------------------------------------------------------------------------------

std::error_code unsnappy_block(std::span<const uint8_t> in, decompress_buffer& out, size_t cap) {
    const char* src = reinterpret_cast<const char*>(in.data());
    size_t declared = 0;
    if (!snappy::GetUncompressedLength(src, in.size(), &declared)) {
        return errc::corrupt_message;
    }
    if (declared / snappy_max_expansion > in.size()) {
        return errc::corrupt_message;
    }
    if (declared > cap - std::min(cap, out.size())) {
        return errc::decompressed_too_large;
    }
    if (!out.reserve_extra(declared, cap)) {
        return errc::decompressed_too_large;
    }
    if (!snappy::RawUncompress(src, in.size(), reinterpret_cast<char*>(out.tail()))) {
        return errc::corrupt_message;
    }
    out.commit(declared);
    return {};
}

bool is_xerial(std::span<const uint8_t> in) {
    return in.size() >= xerial_header_size &&
           std::memcmp(in.data(), xerial_magic, sizeof xerial_magic) == 0;
}

std::error_code unsnappy(std::span<const uint8_t> in, decompress_buffer& out, size_t cap) {
    if (!is_xerial(in)) {
        return unsnappy_block(in, out, cap);
    }
    // The version fields are informational; snappy-java itself does not reject other values.
    size_t pos = xerial_header_size;
    while (pos < in.size()) {
        if (in.size() - pos < 4) {
            return errc::corrupt_message;
        }
        uint32_t chunk = load_be32(in.data() + pos);
        pos += 4;
        if (chunk > in.size() - pos) {
            return errc::corrupt_message;
        }
        if (auto ec = unsnappy_block(in.subspan(pos, chunk), out, cap)) {
            return ec;
        }
        pos += chunk;
    }
    return {};
}

std::error_code snappy_block(std::span<const uint8_t> in, std::vector<uint8_t>& out) {
    size_t start = out.size();
    out.resize(start + snappy::MaxCompressedLength(in.size()));
    size_t written = 0;
    snappy::RawCompress(reinterpret_cast<const char*>(in.data()), in.size(),
                        reinterpret_cast<char*>(out.data() + start), &written);
    out.resize(start + written);
    return {};
}

std::error_code snappy_xerial(std::span<const uint8_t> in, std::vector<uint8_t>& out) {
    out.insert(out.end(), std::begin(xerial_magic), std::end(xerial_magic));
    uint8_t versions[8];
    store_be32(versions, xerial_version);
    store_be32(versions + 4, xerial_version);
    out.insert(out.end(), std::begin(versions), std::end(versions));
    for (size_t pos = 0; pos < in.size(); pos += xerial_chunk) {
        size_t length_at = out.size();
        out.resize(length_at + 4);
        (void)snappy_block(in.subspan(pos, std::min(xerial_chunk, in.size() - pos)), out);
        store_be32(out.data() + length_at, static_cast<uint32_t>(out.size() - length_at - 4));
    }
    return {};
}

// ---- lz4 --------------------------------------------------------------------------------------

struct lz4_context {
    LZ4F_dctx* ctx = nullptr;
    lz4_context() {
        if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) {
            ctx = nullptr;
        }
    }
    ~lz4_context() { LZ4F_freeDecompressionContext(ctx); }
    lz4_context(const lz4_context&) = delete;
    lz4_context& operator=(const lz4_context&) = delete;
};

std::error_code unlz4(std::span<const uint8_t> in, decompress_buffer& out, size_t cap) {
    thread_local lz4_context cached;
    if (cached.ctx == nullptr) {
        return errc::corrupt_message;
    }
    LZ4F_resetDecompressionContext(cached.ctx);
    const uint8_t* src = in.data();
    size_t left = in.size();
    size_t hint = 1;  // non-zero until a frame is complete
    const size_t limit = growth_limit(cap);
    while (left > 0 || hint != 0) {
        if (out.spare() == 0 && !out.grow(limit)) {
            return errc::decompressed_too_large;
        }
        size_t produced = out.spare();
        size_t consumed = left;
        hint = LZ4F_decompress(cached.ctx, out.tail(), &produced, src, &consumed, nullptr);
        if (LZ4F_isError(hint)) {
            return errc::corrupt_message;
        }
        out.commit(produced);
        src += consumed;
        left -= consumed;
        if (hint != 0 && consumed == 0 && produced == 0) {
            return errc::corrupt_message;  // input ended inside a frame
        }
    }
    return finish(out, cap);
}

std::error_code lz4(std::span<const uint8_t> in, std::vector<uint8_t>& out, int level) {
    // 64 KiB independent blocks, as the Java client's KafkaLZ4BlockOutputStream writes them.
    LZ4F_preferences_t prefs{};
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.compressionLevel = level;
    size_t start = out.size();
    size_t bound = LZ4F_compressFrameBound(in.size(), &prefs);
    out.resize(start + bound);
    size_t written = LZ4F_compressFrame(out.data() + start, bound, in.data(), in.size(), &prefs);
    if (LZ4F_isError(written)) {
        out.resize(start);
        return errc::corrupt_message;
    }
    out.resize(start + written);
    return {};
}

// ---- zstd -------------------------------------------------------------------------------------

struct zstd_contexts {
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ~zstd_contexts() {
        ZSTD_freeDCtx(dctx);
        ZSTD_freeCCtx(cctx);
    }
    zstd_contexts() = default;
    zstd_contexts(const zstd_contexts&) = delete;
    zstd_contexts& operator=(const zstd_contexts&) = delete;
};

zstd_contexts& zstd_cached() {
    thread_local zstd_contexts cached;
    return cached;
}

std::error_code unzstd(std::span<const uint8_t> in, decompress_buffer& out, size_t cap) {
    ZSTD_DCtx* ctx = zstd_cached().dctx;
    if (ctx == nullptr) {
        return errc::corrupt_message;
    }
    ZSTD_DCtx_reset(ctx, ZSTD_reset_session_only);
    ZSTD_DCtx_setParameter(ctx, ZSTD_d_windowLogMax, zstd_window_log_max);
    ZSTD_inBuffer src{in.data(), in.size(), 0};
    size_t hint = 1;  // non-zero until a frame is fully decoded and flushed
    const size_t limit = growth_limit(cap);
    while (src.pos < src.size || hint != 0) {
        if (out.spare() == 0 && !out.grow(limit)) {
            return errc::decompressed_too_large;
        }
        ZSTD_outBuffer dst{out.tail(), out.spare(), 0};
        size_t before = src.pos;
        hint = ZSTD_decompressStream(ctx, &dst, &src);
        if (ZSTD_isError(hint)) {
            return errc::corrupt_message;
        }
        out.commit(dst.pos);
        if (hint != 0 && src.pos == before && dst.pos == 0) {
            return errc::corrupt_message;  // input ended inside a frame
        }
    }
    return finish(out, cap);
}

std::error_code zstd(std::span<const uint8_t> in, std::vector<uint8_t>& out, int level) {
    ZSTD_CCtx* ctx = zstd_cached().cctx;
    if (ctx == nullptr) {
        return errc::corrupt_message;
    }
    size_t start = out.size();
    size_t bound = ZSTD_compressBound(in.size());
    out.resize(start + bound);
    size_t written = ZSTD_compressCCtx(ctx, out.data() + start, bound, in.data(), in.size(),
                                       level == 0 ? ZSTD_CLEVEL_DEFAULT : level);
    if (ZSTD_isError(written)) {
        out.resize(start);
        return errc::corrupt_message;
    }
    out.resize(start + written);
    return {};
}

}  // namespace

void decompress_buffer::reallocate(size_t capacity) {
    auto fresh = std::make_unique_for_overwrite<uint8_t[]>(capacity);
    if (_size > 0) {
        std::memcpy(fresh.get(), _data.get(), _size);
    }
    _data = std::move(fresh);
    _capacity = capacity;
}

bool decompress_buffer::grow(size_t cap) {
    if (_capacity >= cap) {
        return false;
    }
    size_t target = std::max(min_growth, _capacity > cap / 2 ? cap : _capacity * 2);
    reallocate(std::min(target, cap));
    return true;
}

bool decompress_buffer::reserve_extra(size_t n, size_t cap) {
    if (n > cap || _size > cap - n) {
        return false;
    }
    if (spare() >= n) {
        return true;
    }
    size_t target = std::max({min_growth, _size + n, _capacity > cap / 2 ? cap : _capacity * 2});
    reallocate(std::min(target, cap));
    return true;
}

std::string_view to_string(compression c) noexcept {
    switch (c) {
        case compression::none:
            return "none";
        case compression::gzip:
            return "gzip";
        case compression::snappy:
            return "snappy";
        case compression::lz4:
            return "lz4";
        case compression::zstd:
            return "zstd";
    }
    return "unknown";
}

std::error_code decompress(compression codec, std::span<const uint8_t> input,
                           decompress_buffer& out, size_t cap) {
    out.clear();
    switch (codec) {
        case compression::gzip:
            return gunzip(input, out, cap);
        case compression::snappy:
            return unsnappy(input, out, cap);
        case compression::lz4:
            return unlz4(input, out, cap);
        case compression::zstd:
            return unzstd(input, out, cap);
        case compression::none:
            break;
    }
    return errc::unsupported_compression;
}

std::error_code compress(compression codec, std::span<const uint8_t> input,
                         std::vector<uint8_t>& out, const compress_options& options) {
    switch (codec) {
        case compression::gzip:
            return gzip(input, out, options.level);
        case compression::snappy:
            return options.snappy_xerial ? snappy_xerial(input, out) : snappy_block(input, out);
        case compression::lz4:
            return lz4(input, out, options.level);
        case compression::zstd:
            return zstd(input, out, options.level);
        case compression::none:
            out.insert(out.end(), input.begin(), input.end());
            return {};
    }
    return errc::unsupported_compression;
}

}  // namespace spool::protocol::records
