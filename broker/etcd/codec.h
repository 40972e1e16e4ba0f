#pragma once

// The JSON of etcd's gRPC-JSON gateway (etcd 3.4, /v3/...): request bodies out, responses in.
// The gateway speaks proto3 JSON: bytes are base64, int64 are decimal strings, and a field at its
// default value (0, false, "", empty list) is left out, so every absent field reads as 0/false.
//
//   POST /v3/kv/range  {"key":"Zm9v","range_end":"Zm9w","revision":"5","limit":"1000"}
//   -> {"header":{"revision":"7",...},"kvs":[{"key":"Zm9v","create_revision":"2",
//       "mod_revision":"7","version":"3","value":"YmFy","lease":"0"}],"more":true,"count":"2"}
//   watch stream, one object per line:
//     {"result":{"header":{"revision":"4"},"created":true}}
//     {"result":{"header":{"revision":"5"},"events":[{"type":"DELETE","kv":{...}}]}}
//     {"result":{"header":{...},"canceled":true,"compact_revision":"2"}}
//     {"error":{"grpc_code":14,"http_code":503,"message":"...","http_status":"..."}}
//   errors of unary calls: HTTP 4xx/5xx with {"error":"...","message":"...","code":<grpc code>}
//
// Every decoder is strict about types (a string where an object belongs is errc::bad_response)
// and never trusts a size the body claims.

#include "broker/etcd/client.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace spool::broker::etcd::codec {

std::string base64_encode(std::string_view bytes);
result<std::string> base64_decode(std::string_view text);

// Request bodies.
std::string encode_range(std::string_view key, std::string_view range_end, int64_t revision,
                         int64_t limit);
std::string encode_put(std::string_view key, std::string_view value, int64_t lease);
std::string encode_delete(std::string_view key, std::string_view range_end);
std::string encode_txn(const txn_request& request);
std::string encode_compaction(int64_t revision);
std::string encode_lease_grant(int64_t ttl_seconds);
std::string encode_lease_id(int64_t lease_id);
std::string encode_watch_create(std::string_view key, std::string_view range_end,
                                int64_t start_revision);

// Response bodies of HTTP 200 answers.
result<range_result> decode_range(std::string_view body);
// The header's revision (put, compaction, revoke).
result<int64_t> decode_revision(std::string_view body);
result<int64_t> decode_deleted(std::string_view body);
result<txn_result> decode_txn(std::string_view body);
result<lease> decode_lease_grant(std::string_view body);
// keepalive is a streamed RPC: {"result":{"ID":..,"TTL":..}}; TTL 0 (absent) means etcd no
// longer has the lease -> errc::lease_not_found.
result<int64_t> decode_keep_alive(std::string_view body);

// The error an HTTP status other than 200 stands for, from the gateway's error body.
std::error_code decode_error(unsigned http_status, std::string_view body);

// One message of a watch stream.
struct watch_message {
    enum class kind { created, batch, canceled, error };
    kind what = kind::batch;
    watch_batch batch;             // kind::batch (events or a progress notification)
    int64_t compact_revision = 0;  // kind::canceled: > 0 when the start revision was compacted
    std::error_code error;         // kind::error, kind::canceled
    std::string reason;            // kind::error / canceled: etcd's words, for the log
};
result<watch_message> decode_watch_message(std::string_view line);

}  // namespace spool::broker::etcd::codec
