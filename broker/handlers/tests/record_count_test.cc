#include "broker/handlers/record_count.h"

#include "protocol/records/batch_builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace spool::broker::handlers {
namespace {

namespace rec = protocol::records;

// Batches of the given record counts and value size, back to back, in an unlinked temp file.
class batch_file {
public:
    batch_file(const std::vector<int>& counts, size_t value_size, rec::compression codec) {
        std::string value(value_size, 'v');
        for (int n : counts) {
            rec::batch_options opts;
            opts.codec = codec;
            rec::batch_builder b(opts);
            for (int i = 0; i < n; ++i)
                b.add(1000 + i, rec::nullable_bytes::null(), rec::nullable_bytes::of(value));
            auto bytes = b.build();
            _batch_sizes.push_back(bytes.size());
            _bytes.insert(_bytes.end(), bytes.begin(), bytes.end());
        }
        char path[] = "/tmp/record_count_testXXXXXX";
        int fd = ::mkstemp(path);
        EXPECT_GE(fd, 0);
        ::unlink(path);
        EXPECT_EQ(::write(fd, _bytes.data(), _bytes.size()), static_cast<ssize_t>(_bytes.size()));
        _file = std::make_shared<file_handle>(fd);
    }

    file_slice slice(uint64_t offset, uint64_t length) const {
        return {_file, offset, static_cast<uint32_t>(length)};
    }
    file_slice all() const { return slice(0, _bytes.size()); }
    size_t batch_size(size_t i) const { return _batch_sizes[i]; }

private:
    std::vector<uint8_t> _bytes;
    std::vector<size_t> _batch_sizes;
    std::shared_ptr<file_handle> _file;
};

TEST(record_count, test_sums_the_header_counts_of_small_batches_in_one_window) {
    batch_file f({1, 3, 5, 7}, 10, rec::compression::none);
    std::vector<file_slice> slices{f.all()};
    EXPECT_EQ(count_records(slices), 16u);
}

TEST(record_count, test_large_batches_are_read_header_by_header) {
    // Over 8 KiB each: after the first, headers are read one by one, not in a window.
    batch_file f({3, 4, 5}, 3000, rec::compression::none);
    ASSERT_GT(f.batch_size(0), 8192u);
    std::vector<file_slice> slices{f.all()};
    EXPECT_EQ(count_records(slices), 12u);
}

TEST(record_count, test_compressed_batches_count_without_decompressing) {
    batch_file f({50, 25}, 100, rec::compression::lz4);
    std::vector<file_slice> slices{f.all()};
    EXPECT_EQ(count_records(slices), 75u);
}

TEST(record_count, test_several_slices_of_one_file) {
    batch_file f({2, 4, 8}, 10, rec::compression::none);
    size_t first = f.batch_size(0);
    std::vector<file_slice> slices{f.slice(0, first),
                                   f.slice(first, f.batch_size(1) + f.batch_size(2))};
    EXPECT_EQ(count_records(slices), 14u);
}

TEST(record_count, test_a_slice_cut_short_counts_only_whole_headers) {
    batch_file f({2, 4}, 10, rec::compression::none);
    // The second batch's header is cut in half: only the first batch counts.
    size_t cut = f.batch_size(0) + rec::batch_header_size / 2;
    std::vector<file_slice> slices{f.slice(0, cut)};
    EXPECT_EQ(count_records(slices), 2u);
    EXPECT_EQ(count_records({}), 0u);
}

}  // namespace
}  // namespace spool::broker::handlers
