#include "broker/storage/partition_metadata.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/errc.h"

#include <system_error>

namespace spool::broker::storage {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view version_key = "version: ";
constexpr std::string_view topic_id_key = "topic_id: ";

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) {
        s.remove_suffix(1);
    }
    return s;
}

}  // namespace

std::string format_partition_metadata(const protocol::uuid& topic_id) {
    return std::string(version_key) + "0\n" + std::string(topic_id_key) + topic_id.to_string() +
           "\n";
}

result<protocol::uuid> parse_partition_metadata(std::string_view text) {
    auto eol = text.find('\n');
    if (eol == std::string_view::npos) {
        return make_error_code(std::errc::invalid_argument);
    }
    auto version = trim(text.substr(0, eol));
    auto rest = text.substr(eol + 1);
    auto id_line = trim(rest.substr(0, rest.find('\n')));
    if (version != std::string(version_key) + "0" || !id_line.starts_with(topic_id_key)) {
        return make_error_code(std::errc::invalid_argument);
    }
    auto id = protocol::uuid::parse(id_line.substr(topic_id_key.size()));
    if (!id) {
        return make_error_code(std::errc::invalid_argument);
    }
    return *id;
}

result<std::optional<protocol::uuid>> read_partition_metadata(const fs::path& dir) {
    auto bytes = read_file(dir / layout::partition_metadata_file);
    if (!bytes) {
        if (bytes.error() == make_error_code(errc::not_found)) {
            return std::optional<protocol::uuid>{};
        }
        return bytes.error();
    }
    std::string_view text(reinterpret_cast<const char*>(bytes.value().data()),
                          bytes.value().size());
    SPOOL_TRY(id, parse_partition_metadata(text));
    return std::optional<protocol::uuid>(id);
}

result<void> write_partition_metadata(file_ops& ops, const fs::path& dir,
                                      const protocol::uuid& topic_id) {
    return write_file_atomic(ops, dir / layout::partition_metadata_file,
                             format_partition_metadata(topic_id));
}

result<partition_dir_claim> claim_partition_dir(file_ops& ops, const fs::path& dir,
                                                const protocol::uuid& topic_id) {
    partition_dir_claim claim;
    if (topic_id.is_zero()) {
        return claim;
    }
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        claim.record_after_open = true;  // a new partition: the log creates the directory
        return claim;
    }
    auto found = read_partition_metadata(dir);
    if (!found) {
        if (found.error() != std::errc::invalid_argument) {
            return found.error();
        }
        claim.unreadable = true;
    } else if (found.value() && *found.value() != topic_id) {
        fs::path aside = dir;
        aside += "." + protocol::uuid::random().to_string() + std::string(layout::stray_dir_suffix);
        fs::rename(dir, aside, ec);
        if (ec) {
            return ec;
        }
        SPOOL_TRY(sync_dir(dir.parent_path()));
        claim.set_aside = std::move(aside);
        claim.previous_id = *found.value();
        claim.record_after_open = true;  // the log creates a new directory
        return claim;
    } else if (found.value()) {
        return claim;  // this topic's, already recorded
    }
    SPOOL_TRY(write_partition_metadata(ops, dir, topic_id));
    return claim;
}

}  // namespace spool::broker::storage
