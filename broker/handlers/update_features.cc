// UpdateFeatures (API 57, v0-2; KIP-584, KIP-778): `kafka-features upgrade / downgrade /
// disable`, for metadata.version and transaction.version (broker/metadata/features.h,
// docs/upgrades.md). Any broker takes it: it judges the request on its snapshot with Kafka's
// rules (metadata::check_update: every live broker must support the level; a downgrade needs a
// downgrade type; a metadata.version downgrade past a metadata change is refused), then stores
// the new levels with a compare on the record it judged, judging again when another update came
// first. A refusal is Kafka's INVALID_UPDATE_VERSION at the top level with Kafka's "The update
// failed for all features since ..." message and, in v0-1, no per-feature results; success
// lists every feature with NONE (v0-1; v2 has no results).

#include "protocol/messages/update_features.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"
#include "broker/metadata/features.h"

#include <optional>
#include <string>
#include <vector>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::update_features_response;

// What each live broker's binary supports: the broker answering is this binary; another one
// stored its ranges at start (P/supported_features/<id>), and one that stored none for its
// current incarnation runs a binary from before metadata.version.
std::vector<metadata::broker_support> live_support(const metadata::cluster_state& s,
                                                   int32_t self) {
    std::vector<metadata::broker_support> out;
    for (const auto& [id, reg] : s.brokers) {
        metadata::broker_support b{id, {}};
        if (id == self) {
            b.supported = metadata::supported_by_this_binary();
        } else if (auto it = s.broker_support.find(id);
                   it != s.broker_support.end() &&
                   it->second.incarnation_id == reg.incarnation_id) {
            b.supported = it->second.supported;
        } else {
            b.supported = metadata::supported_by_unversioned_binary();
        }
        out.push_back(std::move(b));
    }
    return out;
}

response refused(error_code e, std::optional<std::string> message) {
    response resp;
    resp.error_code = code(e);
    resp.error_message = std::move(message);
    return resp;
}

bool same_levels(const metadata::finalized_features& a, const metadata::finalized_features& b) {
    return a.metadata_version == b.metadata_version &&
           a.transaction_version == b.transaction_version;
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::update_features_request& req) {
    if (!charge_items<metadata::feature_update>(ctx, req.feature_updates.size())) {
        co_return response{};
    }
    auto snapshot = ctx.svc.store.snapshot();
    // Kafka: Alter on the cluster.
    if (!request_authz(ctx, *snapshot).cluster(security::acl_operation::alter)) {
        co_return refused(error_code::cluster_authorization_failed, std::nullopt);
    }
    std::vector<metadata::feature_update> updates;
    for (const auto& u : req.feature_updates) {
        metadata::feature_update m;
        m.feature = u.feature;
        m.max_version_level = u.max_version_level;
        if (ctx.version() == 0) {
            m.type = u.allow_downgrade ? metadata::upgrade_type::safe_downgrade
                                       : metadata::upgrade_type::upgrade;
        } else if (u.upgrade_type >= 1 && u.upgrade_type <= 3) {
            m.type = static_cast<metadata::upgrade_type>(u.upgrade_type);
        } else {
            co_return refused(error_code::invalid_request,
                              "Unknown upgrade type " + std::to_string(u.upgrade_type));
        }
        for (const auto& seen : updates) {
            if (seen.feature == m.feature) {
                co_return refused(error_code::invalid_request,
                                  "Feature " + m.feature + " was specified more than once.");
            }
        }
        updates.push_back(std::move(m));
    }
    const auto tv_now =
        static_cast<int16_t>(ctx.svc.config.get(config::keys::spool_transaction_version));
    // Judged again on a newer snapshot when another broker's update came first.
    for (int attempt = 0;; ++attempt) {
        const auto current = snapshot->features;
        auto outcome = metadata::check_update(current, tv_now, updates,
                                              live_support(*snapshot, ctx.svc.node_id));
        if (outcome.refusal) {
            log::get("kafka")->info("UpdateFeatures from {} refused: {}",
                                    ctx.net.connection().peer, outcome.refusal->message);
            co_return refused(error_code::invalid_update_version,
                              "The update failed for all features since the following feature "
                              "had an error: " +
                                  outcome.refusal->message);
        }
        if (ctx.version() >= 1 && req.validate_only) {
            break;
        }
        if (same_levels(current, outcome.next)) {
            break;  // nothing to store (Kafka answers NONE as well)
        }
        auto written_op = ctx.svc.store.write_features(current, outcome.next);
        auto written = co_await std::move(written_op);
        if (written) {
            log::get("kafka")->info(
                "UpdateFeatures from {}: metadata.version {} -> {}, transaction.version {} -> {}",
                ctx.net.connection().peer, current.metadata_version,
                outcome.next.metadata_version, current.transaction_version.value_or(tv_now),
                outcome.next.transaction_version.value_or(tv_now));
            break;
        }
        if (written.error() != metadata::errc::stale_features || attempt >= 4) {
            auto failure = from_store(written.error());
            co_return refused(failure.error, failure.message.value_or(written.error().message()));
        }
        snapshot = ctx.svc.store.snapshot();
    }
    response resp;
    if (ctx.version() <= 1) {
        for (const auto& u : updates) {
            auto& r = resp.results.emplace_back();
            r.feature = u.feature;
            r.error_code = code(error_code::none);
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_update_features(request_ctx& ctx) {
    return typed_handler<protocol::update_features_request, protocol::update_features_response,
                         run>(ctx);
}

}  // namespace spool::broker::handlers
