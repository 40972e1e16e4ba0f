#pragma once

// Keys and values of __transaction_state records, byte-compatible with Apache Kafka 4.x's
// (TransactionLogKey v0 and TransactionLogValue v1 in transaction-coordinator's schemas), so
// `kafka-dump-log --transaction-log-decoder` reads Spool's segments. Both start with an int16
// version (MessageUtil.toVersionPrefixedBytes). A null value is a tombstone (an expired id).
//
//   key v0:   version int16 = 0 | transactional_id string (int16 length)
//
//   value v1 (flexible): version int16 = 1 | producer_id int64 | producer_epoch int16
//             | timeout_ms int32 | status int8 | partitions compact nullable array of
//               [ topic compact string | partition_ids compact array of int32 | tags ]
//             | last_update_ms int64 | start_ms int64
//             | tags: 0 previous_producer_id int64 (when != -1), 1 next_producer_id int64
//               (when != -1), 2 client_transaction_version int16 (when != 0)
//   value v0: the same without the flexible parts (int16 strings, int32 counts, no tags).
//
// Kafka writes a null partition array for Empty and an array (possibly empty) otherwise.

#include "broker/txn/txn_metadata.h"
#include "common/result.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace spool::broker::txn {

using bytes = std::vector<uint8_t>;

[[nodiscard]] bytes encode_key(std::string_view transactional_id);
[[nodiscard]] bytes encode_value(const txn_metadata& m);

// errc::invalid_request for bytes that are not a v0 key / v0-v1 value.
[[nodiscard]] result<std::string> decode_key(std::span<const uint8_t> key);
// The transactional id is the key's; the value does not carry it.
[[nodiscard]] result<txn_metadata> decode_value(std::string transactional_id,
                                                std::span<const uint8_t> value);

}  // namespace spool::broker::txn
