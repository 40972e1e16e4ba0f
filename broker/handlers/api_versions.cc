#include "protocol/messages/api_versions.h"

#include "broker/handlers/api_table.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/services.h"
#include "broker/metadata/features.h"

#include <algorithm>

namespace spool::broker::handlers {

namespace {

using protocol::api_key;

// The versions that are KIP-890 part 2 (Kafka's TransactionVersion: a client on transaction
// version 2 sends Produce v12+, TxnOffsetCommit v5+ and EndTxn v5+, and the broker reads those
// versions as TV2 requests). Below transaction.version 2 they are not advertised.
int16_t capped(api_key key, int16_t max_version, int32_t transaction_version) {
    if (transaction_version >= 2) {
        return max_version;
    }
    switch (key) {
        case api_key::produce:
            return std::min<int16_t>(max_version, 11);
        case api_key::txn_offset_commit:
        case api_key::end_txn:
            return std::min<int16_t>(max_version, 4);
        default:
            return max_version;
    }
}

// The features (broker/metadata/features.h): what this binary supports, and the cluster's
// finalized levels from the metadata snapshot. metadata.version is always finalized (a cluster
// without a stored level is at 32, Spool 0.3's layout). transaction.version is the stored
// level once UpdateFeatures finalized one, else spool.transaction.version; the Java 4.x
// producer reads it at initTransactions/beginTransaction (2 or more: KIP-890 part 2). Kafka
// lists a finalized feature only above level 0. The epoch (the stored record's, at least 1)
// never goes down, so a client sees an UpdateFeatures as soon as it asks again.
protocol::api_versions_response full_list(const services& svc) {
    const auto snapshot = svc.store.snapshot();
    const auto& features = snapshot->features;
    const int32_t transaction_version = features.transaction_version.value_or(
        static_cast<int16_t>(svc.config.get(config::keys::spool_transaction_version)));
    protocol::api_versions_response resp;
    for (const auto& e : supported_apis()) {
        resp.api_keys.push_back({static_cast<int16_t>(e.key), e.min_version,
                                 capped(e.key, e.max_version, transaction_version), {}});
    }
    for (const auto& [name, range] : metadata::supported_by_this_binary()) {
        resp.supported_features.push_back({name, range.min, range.max, {}});
    }
    resp.finalized_features.push_back({std::string(metadata::metadata_version_feature),
                                       features.metadata_version, features.metadata_version, {}});
    if (transaction_version > 0) {
        resp.finalized_features.push_back(
            {std::string(metadata::transaction_version_feature),
             static_cast<int16_t>(transaction_version), static_cast<int16_t>(transaction_version),
             {}});
    }
    resp.finalized_features_epoch = std::max<int64_t>(1, features.epoch);
    return resp;
}

boost::asio::awaitable<protocol::api_versions_response> run(request_ctx& ctx,
                                                            protocol::api_versions_request& req) {
    co_return full_list(ctx.svc);
}

}  // namespace

handler_result handle_api_versions(request_ctx& ctx) {
    return typed_handler<protocol::api_versions_request, protocol::api_versions_response, run>(ctx);
}

net::handled unsupported_api_versions(const services& svc, int32_t correlation_id) {
    auto resp = full_list(svc);
    resp.error_code = code(protocol::error_code::unsupported_version);
    auto enc = protocol::encode_response(correlation_id, 0, resp);
    net::handled h;
    h.response.buffer = std::move(enc.bytes);
    return h;
}

}  // namespace spool::broker::handlers
