#pragma once

// Finalized feature levels (Kafka's KIP-584 / KIP-778 model, docs/upgrades.md): the cluster's
// metadata carries `metadata.version`, the format of the metadata itself, and optionally
// `transaction.version`; every broker binary supports a range of each. The first broker of a
// new cluster finalizes metadata.version at the highest level its binary supports; an operator
// raises it with UpdateFeatures (`kafka-features upgrade`) once every broker runs a binary that
// supports the new level. A broker whose binary does not support the finalized level refuses to
// start.
//
// Spool's levels are Kafka's feature levels, so Kafka's tools name them:
//
//   32 "4.4-IV1"  the layout of Spool 0.3, which had no features record: a cluster without one
//                 is at this level
//   33 "4.4-IV2"  the finalized levels are stored (P/features in etcd, a journal change in the
//                 embedded store), so transaction.version can be finalized by UpdateFeatures;
//                 a metadata change (Kafka's didMetadataChange): no safe downgrade below it
//
// Pure values and checks; the stores persist `finalized_features`, the UpdateFeatures handler
// asks check_update().

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::metadata {

inline constexpr std::string_view metadata_version_feature = "metadata.version";
inline constexpr std::string_view transaction_version_feature = "transaction.version";

// metadata.version levels this binary reads and writes.
inline constexpr int16_t metadata_version_unversioned = 32;  // Spool 0.3's layout
inline constexpr int16_t metadata_version_features_record = 33;
inline constexpr int16_t metadata_version_min = metadata_version_unversioned;
inline constexpr int16_t metadata_version_max = metadata_version_features_record;
// transaction.version levels (KIP-890): 0-2, as Kafka 4.x.
inline constexpr int16_t transaction_version_min = 0;
inline constexpr int16_t transaction_version_max = 2;

// Kafka's name of a metadata.version level ("4.4-IV2"), or the number for one Spool does not
// name.
std::string metadata_version_name(int16_t level);
// Whether going down from `from` to `to` (to < from) passes a level that changed the metadata
// format (Kafka's MetadataVersion.checkIfMetadataChanged): such a downgrade could lose metadata.
bool metadata_changed_between(int16_t to, int16_t from);

struct level_range {
    int16_t min = 0;
    int16_t max = 0;

    bool contains(int16_t level) const { return level >= min && level <= max; }
    bool operator==(const level_range&) const = default;
};

// What this binary supports, feature -> range (ApiVersions' SupportedFeatures).
std::map<std::string, level_range, std::less<>> supported_by_this_binary();
// What a broker whose binary stored no supported ranges supports: Spool 0.3 and earlier read
// and write the unversioned layout and know nothing of stored feature levels.
std::map<std::string, level_range, std::less<>> supported_by_unversioned_binary();

// The cluster's finalized levels. record_epoch 0: no record stored (a cluster from before
// metadata.version, or one that has not bootstrapped): metadata.version is then the
// unversioned layout and transaction.version is the broker's spool.transaction.version.
struct finalized_features {
    int16_t metadata_version = metadata_version_unversioned;
    std::optional<int16_t> transaction_version;
    // Bumped by every write; ApiVersions' FinalizedFeaturesEpoch is max(1, this). Clients only
    // need it never to go down.
    int64_t epoch = 0;
    // etcd: the record's mod revision, compared by the next write (0 = absent). Not persisted.
    int64_t record_revision = 0;

    bool stored() const { return epoch > 0; }
    bool operator==(const finalized_features& o) const {
        return metadata_version == o.metadata_version &&
               transaction_version == o.transaction_version && epoch == o.epoch;
    }
};

// The levels a new cluster is bootstrapped at (the first broker writes them).
finalized_features bootstrap_features();

// A broker's supported ranges as it stored them at start (P/supported_features/<id>), for the
// incarnation that wrote them: a registration whose incarnation differs, or that has no record,
// is of a binary from before metadata.version (it supports 32 only).
struct broker_features {
    std::string incarnation_id;
    std::map<std::string, level_range, std::less<>> supported;

    bool operator==(const broker_features&) const = default;
};

// Why this binary cannot run on a cluster finalized at `f` (empty: it can).
std::string unsupported_reason(const finalized_features& f);

// One UpdateFeatures entry.
enum class upgrade_type : int8_t { upgrade = 1, safe_downgrade = 2, unsafe_downgrade = 3 };
struct feature_update {
    std::string feature;
    int16_t max_version_level = 0;
    upgrade_type type = upgrade_type::upgrade;
};

// A live broker as the check sees it: its node id and what it supports.
struct broker_support {
    int32_t node_id = -1;
    std::map<std::string, level_range, std::less<>> supported;
};

// The refusal of an update, Kafka's INVALID_UPDATE_VERSION with Kafka's message (without the
// "The update failed for all features since ..." prefix the handler adds).
struct update_refusal {
    std::string message;
};

// Applies the updates to `current` (Kafka's FeatureControlManager rules) and returns the new
// levels (epoch + 1), or the first refusal. `transaction_version_now` is the level in force
// when none is stored (spool.transaction.version).
struct update_outcome {
    std::optional<update_refusal> refusal;
    finalized_features next;
};
update_outcome check_update(const finalized_features& current, int16_t transaction_version_now,
                            const std::vector<feature_update>& updates,
                            const std::vector<broker_support>& brokers);

}  // namespace spool::broker::metadata
