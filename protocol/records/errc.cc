#include "protocol/records/errc.h"

#include <string>

namespace spool::protocol::records {

namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "records"; }

    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::corrupt_message:
                return "corrupt record batch";
            case errc::invalid_record:
                return "invalid record";
            case errc::unsupported_magic:
                return "unsupported record batch magic (only v2 is accepted)";
            case errc::unsupported_compression:
                return "unsupported compression codec";
            case errc::message_too_large:
                return "record batch larger than the allowed size";
            case errc::decompressed_too_large:
                return "decompressed records exceed the allowed size";
        }
        return "unknown records error " + std::to_string(ev);
    }
};

}  // namespace

const std::error_category& records_category() noexcept {
    static const category instance;
    return instance;
}

int16_t to_kafka_error_code(errc e) noexcept {
    switch (e) {
        case errc::corrupt_message:
            return kafka_error::corrupt_message;
        case errc::invalid_record:
        case errc::unsupported_magic:
            return kafka_error::invalid_record;
        case errc::unsupported_compression:
            return kafka_error::unsupported_compression_type;
        case errc::message_too_large:
        case errc::decompressed_too_large:
            return kafka_error::message_too_large;
    }
    return kafka_error::unknown_server_error;
}

int16_t to_kafka_error_code(std::error_code ec) noexcept {
    if (!ec) {
        return kafka_error::none;
    }
    if (ec.category() != records_category()) {
        return kafka_error::unknown_server_error;
    }
    return to_kafka_error_code(static_cast<errc>(ec.value()));
}

}  // namespace spool::protocol::records
