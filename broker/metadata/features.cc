#include "broker/metadata/features.h"

#include <fmt/format.h>

#include <algorithm>

namespace spool::broker::metadata {

namespace {

struct named_level {
    int16_t level;
    std::string_view name;
    bool metadata_changed;  // Kafka's didMetadataChange for this level
};

// Kafka 4.4's MetadataVersion entries for the levels Spool supports.
constexpr named_level named_levels[] = {
    {32, "4.4-IV1", true},
    {33, "4.4-IV2", true},
};

const named_level* find_level(int16_t level) {
    for (const auto& n : named_levels) {
        if (n.level == level) {
            return &n;
        }
    }
    return nullptr;
}

std::string invalid_update(const feature_update& u, std::string_view why) {
    return fmt::format("Invalid update version {} for feature {}. {}", u.max_version_level,
                       u.feature, why);
}

}  // namespace

std::string metadata_version_name(int16_t level) {
    if (const auto* n = find_level(level)) {
        return std::string(n->name);
    }
    return std::to_string(level);
}

bool metadata_changed_between(int16_t to, int16_t from) {
    for (int16_t l = static_cast<int16_t>(to + 1); l <= from; ++l) {
        const auto* n = find_level(l);
        if (n == nullptr || n->metadata_changed) {
            return true;  // a level Spool does not know: assume the worst
        }
    }
    return false;
}

std::map<std::string, level_range, std::less<>> supported_by_this_binary() {
    return {{std::string(metadata_version_feature), {metadata_version_min, metadata_version_max}},
            {std::string(transaction_version_feature),
             {transaction_version_min, transaction_version_max}}};
}

finalized_features bootstrap_features() {
    finalized_features f;
    f.metadata_version = metadata_version_max;
    f.epoch = 1;
    return f;
}

std::string unsupported_reason(const finalized_features& f) {
    if (f.metadata_version < metadata_version_min || f.metadata_version > metadata_version_max) {
        return fmt::format(
            "the cluster's metadata.version is {} ({}), but this binary supports {}-{} ({} to {}): "
            "run a binary that supports it (docs/upgrades.md)",
            f.metadata_version, metadata_version_name(f.metadata_version), metadata_version_min,
            metadata_version_max, metadata_version_name(metadata_version_min),
            metadata_version_name(metadata_version_max));
    }
    if (f.transaction_version && (*f.transaction_version < transaction_version_min ||
                                  *f.transaction_version > transaction_version_max)) {
        return fmt::format(
            "the cluster's transaction.version is {}, but this binary supports {}-{}: run a "
            "binary that supports it (docs/upgrades.md)",
            *f.transaction_version, transaction_version_min, transaction_version_max);
    }
    return {};
}

update_outcome check_update(const finalized_features& current, int16_t transaction_version_now,
                            const std::vector<feature_update>& updates,
                            const std::vector<broker_support>& brokers) {
    update_outcome out;
    out.next = current;
    auto refuse = [&out](std::string message) {
        out.refusal = update_refusal{std::move(message)};
        return out;
    };
    // metadata.version first: a transaction.version in the same request is judged at the new
    // metadata.version.
    std::vector<const feature_update*> ordered;
    for (const auto& u : updates) {
        if (u.feature == metadata_version_feature) {
            ordered.insert(ordered.begin(), &u);
        } else {
            ordered.push_back(&u);
        }
    }
    for (const auto* u : ordered) {
        // Every live broker must support the level (Kafka asks the controllers, then each
        // registered broker).
        for (const auto& b : brokers) {
            auto it = b.supported.find(u->feature);
            if (it == b.supported.end()) {
                if (u->max_version_level > 0) {
                    return refuse(invalid_update(
                        *u, fmt::format("Broker {} does not support this feature.", b.node_id)));
                }
                continue;
            }
            if (!it->second.contains(u->max_version_level) &&
                !(u->max_version_level == 0 && u->feature != metadata_version_feature)) {
                return refuse(invalid_update(
                    *u, fmt::format("Broker {} only supports versions {}-{}", b.node_id,
                                    it->second.min, it->second.max)));
            }
        }
        const bool is_metadata = u->feature == metadata_version_feature;
        const int16_t level_now =
            is_metadata ? out.next.metadata_version
                        : out.next.transaction_version.value_or(transaction_version_now);
        if (u->max_version_level < level_now && u->type == upgrade_type::upgrade) {
            return refuse(invalid_update(
                *u, "Can't downgrade the version of this feature without setting the upgrade "
                    "type to either safe or unsafe downgrade."));
        }
        if (is_metadata) {
            if (u->max_version_level < level_now &&
                metadata_changed_between(u->max_version_level, level_now)) {
                return refuse(fmt::format(
                    "Unsupported metadata.version downgrade from {} to {}. {}", level_now,
                    u->max_version_level,
                    u->type == upgrade_type::unsafe_downgrade
                        ? "Unsafe metadata downgrade is not supported in this version."
                        : "Refusing to perform the requested downgrade because it might delete "
                          "metadata information."));
            }
            out.next.metadata_version = u->max_version_level;
            continue;
        }
        // transaction.version is stored from metadata.version 33 on; below, the broker's
        // spool.transaction.version is the level and a restart changes it.
        if (out.next.metadata_version < metadata_version_features_record &&
            u->max_version_level != level_now) {
            return refuse(invalid_update(
                *u, fmt::format("Feature {} can only be changed at metadata.version {} ({}) or "
                                "above; the cluster is at {} ({}).",
                                u->feature, metadata_version_features_record,
                                metadata_version_name(metadata_version_features_record),
                                out.next.metadata_version,
                                metadata_version_name(out.next.metadata_version))));
        }
        if (out.next.metadata_version >= metadata_version_features_record) {
            out.next.transaction_version = u->max_version_level;
        }
    }
    // Above the 1 ApiVersions shows for a cluster without a record: clients see the change.
    out.next.epoch = std::max<int64_t>(current.epoch, 1) + 1;
    return out;
}

std::map<std::string, level_range, std::less<>> supported_by_unversioned_binary() {
    return {{std::string(metadata_version_feature),
             {metadata_version_unversioned, metadata_version_unversioned}}};
}

}  // namespace spool::broker::metadata
