#include "broker/storage/layout.h"
#include "broker/storage/marker_horizon.h"
#include "broker/storage/partition_log.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/record_reader.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <map>

namespace spool::broker::storage {
namespace {

using namespace test;
namespace fs = std::filesystem;

struct kv {
    int64_t offset;
    std::string key;
    std::optional<std::string> value;
};

// Hands f each batch the log returns, with its records section (tests only).
template <class F>
void for_each_batch(const partition_log& log, F&& f) {
    auto r = log.read(log.log_start_offset(), 1 << 30, log.log_end_offset());
    EXPECT_TRUE(r);
    rec::decompress_buffer scratch;
    rec::validate_options vo;
    vo.origin = rec::batch_origin::log;
    for (const auto& s : r.value().slices) {
        auto bytes = slice_bytes(s);
        rec::batch_walker walker(bytes, vo, scratch);
        while (!walker.done()) {
            auto info = walker.next();
            EXPECT_TRUE(info) << info.error().message();
            if (!info) {
                return;
            }
            f(info.value(), info.value().is_compressed()
                                ? std::span<const uint8_t>(scratch.data())
                                : rec::records_section(bytes, info.value()));
        }
    }
}

// Decodes every record the log returns (tests only).
std::vector<kv> read_all(const partition_log& log) {
    std::vector<kv> out;
    for_each_batch(log, [&](const rec::batch_info& info, std::span<const uint8_t> records) {
        rec::record_reader reader(records, info.record_count);
        rec::record_view v;
        while (reader.next(v)) {
            out.push_back({info.base_offset + v.offset_delta, std::string(v.key.as_string()),
                           v.value.is_null ? std::nullopt
                                           : std::optional(std::string(v.value.as_string()))});
        }
    });
    return out;
}

std::vector<uint8_t> keyed_batch(
    const std::vector<std::pair<std::string, std::optional<std::string>>>& recs, int64_t ts,
    rec::compression codec = rec::compression::none) {
    rec::batch_options o;
    o.codec = codec;
    rec::batch_builder b(o);
    for (const auto& [k, v] : recs) {
        b.add(ts, rec::nullable_bytes::of(k),
              v ? rec::nullable_bytes::of(*v) : rec::nullable_bytes::null());
    }
    return b.build();
}

class compaction : public ::testing::TestWithParam<rec::compression> {
protected:
    void open(log_config cfg) {
        cfg.min_cleanable_dirty_ratio = 0;  // every compact() call runs a pass
        open_options o;
        o.clock = [this] { return model::timestamp(_now); };
        _log =
            partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)}, cfg, o).value();
    }
    void append(const std::vector<std::pair<std::string, std::optional<std::string>>>& recs) {
        auto b = keyed_batch(recs, _now, GetParam());
        ASSERT_TRUE(_log->append(b, model::leader_epoch(0)));
        _log->set_high_watermark(_log->log_end_offset());
    }

    // One transactional record of producer pid (epoch 0) at sequence seq.
    std::vector<uint8_t> txn_batch(int64_t pid, int32_t seq, const std::string& key,
                                   const std::string& value) const {
        rec::batch_options o;
        o.codec = GetParam();
        o.producer_id = pid;
        o.producer_epoch = 0;
        o.base_sequence = seq;
        o.transactional = true;
        rec::batch_builder b(o);
        b.add(_now, rec::nullable_bytes::of(std::string_view(key)),
              rec::nullable_bytes::of(std::string_view(value)));
        return b.build();
    }

    temp_dir _dir;
    int64_t _now = 1'000'000;
    std::unique_ptr<partition_log> _log;
};

TEST_P(compaction, test_keeps_latest_record_per_key_with_original_offsets) {
    auto cfg = small_segments(300);
    cfg.cleanup = cleanup_policy::compact;
    open(cfg);
    for (int round = 0; round < 6; ++round) {
        append({{"a", "a" + std::to_string(round)}, {"b", "b" + std::to_string(round)}});
        append({{"c" + std::to_string(round), "unique"}});
    }
    append({{"a", "a-final"}});
    ASSERT_GT(_log->segment_count(), 2u);
    auto before = read_all(*_log);
    auto r = _log->compact();
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_GT(r.value().segments_cleaned, 0u);
    EXPECT_GT(r.value().records_removed, 0u);
    auto after = read_all(*_log);
    // For each key, the latest record survives at its original offset; keys are unique among
    // the cleaned segments.
    std::map<std::string, int64_t> latest;
    for (const auto& e : before) {
        latest[e.key] = e.offset;
    }
    std::map<std::string, int> seen;
    int64_t prev = -1;
    int64_t active_base = _log->segment_at(_log->segment_count() - 1).base_offset().value();
    for (const auto& e : after) {
        EXPECT_GT(e.offset, prev);
        prev = e.offset;
        if (e.offset < active_base) {
            EXPECT_EQ(++seen[e.key], 1) << e.key;
        }
        auto orig = std::find_if(before.begin(), before.end(),
                                 [&](const kv& b) { return b.offset == e.offset; });
        ASSERT_NE(orig, before.end());
        EXPECT_EQ(orig->key, e.key);
        EXPECT_EQ(orig->value, e.value);
    }
    for (const auto& [k, o] : latest) {
        EXPECT_TRUE(std::any_of(after.begin(), after.end(), [&](const kv& e) {
            return e.key == k && e.offset == o;
        })) << k;
    }
    EXPECT_LT(after.size(), before.size());
    // Reads at a compacted-away offset land on the next surviving batch.
    auto rd = _log->read(model::offset(0), 1, _log->log_end_offset());
    ASSERT_TRUE(rd);
    EXPECT_FALSE(rd.value().slices.empty());
    // No leftovers of the swap.
    for (const auto& de : fs::directory_iterator(_dir.path() / "t-0")) {
        auto name = de.path().filename().string();
        EXPECT_FALSE(name.ends_with(".cleaned") || name.ends_with(".swap")) << name;
    }
}

// Kafka's cleaner on transactions: an aborted transaction's records go (and never supersede the
// committed value of their key), a committed transaction's records are compacted like any, and
// the markers and the aborted-transaction index stay while the pass still met their batches.
TEST_P(compaction, test_aborted_records_go_committed_ones_compact_and_markers_stay) {
    auto cfg = small_segments(300);
    cfg.cleanup = cleanup_policy::compact;
    open(cfg);
    append({{"k", "committed"}});
    std::vector<int64_t> markers;
    auto end_txn = [&](int64_t pid, bool commit) {
        auto m = make_marker(pid, 0, commit);
        auto at = _log->append(m, model::leader_epoch(0));
        ASSERT_TRUE(at);
        markers.push_back(at.value().base_offset.value());
        _log->set_high_watermark(_log->log_end_offset());
    };
    auto aborted_batch = txn_batch(5, 0, "k", "aborted");
    ASSERT_TRUE(_log->append(aborted_batch, model::leader_epoch(0)));
    end_txn(5, false);
    auto old_batch = txn_batch(6, 0, "c", "old");
    ASSERT_TRUE(_log->append(old_batch, model::leader_epoch(0)));
    end_txn(6, true);
    auto new_batch = txn_batch(6, 1, "c", "new");
    ASSERT_TRUE(_log->append(new_batch, model::leader_epoch(0)));
    end_txn(6, true);
    for (int i = 0; i < 8; ++i) {
        append({{"filler" + std::to_string(i), "x"}, {"filler" + std::to_string(i), "y"}});
    }
    ASSERT_GT(_log->segment_count(), 2u);
    auto r = _log->compact();
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_GT(r.value().records_removed, 0u);
    auto after = read_all(*_log);
    auto has = [&](const std::string& key, const std::string& value) {
        return std::any_of(after.begin(), after.end(),
                           [&](const kv& e) { return e.key == key && e.value == value; });
    };
    EXPECT_TRUE(has("k", "committed"));  // the aborted "k" superseded nothing
    EXPECT_FALSE(has("k", "aborted"));   // dropped whole
    EXPECT_FALSE(has("c", "old"));       // a committed record superseded by a later one
    EXPECT_TRUE(has("c", "new"));
    for (int64_t m : markers) {
        EXPECT_TRUE(std::any_of(after.begin(), after.end(), [&](const kv& e) {
            return e.offset == m;
        })) << "marker at " << m;
    }
    auto aborted = _log->aborted_transactions(model::offset(0), _log->log_end_offset());
    ASSERT_TRUE(aborted);
    ASSERT_EQ(aborted.value().size(), 1u);
    EXPECT_EQ(aborted.value()[0].last_offset.value(), markers[0]);
}

// The control batches the log returns (offset, base timestamp, delete horizon set), tests only.
struct control_seen {
    int64_t offset;
    int64_t base_timestamp;
    bool horizon;
};
std::vector<control_seen> control_batches(const partition_log& log) {
    std::vector<control_seen> out;
    for_each_batch(log, [&](const rec::batch_info& info, std::span<const uint8_t>) {
        if (info.is_control()) {
            out.push_back({info.base_offset, info.base_timestamp,
                           has_delete_horizon(info.attributes)});
        }
    });
    return out;
}

// KIP-534 for markers, as Kafka's cleaner: a pass that meets no batch of a marker's transaction
// before it gives the marker a delete horizon (now + delete.retention.ms); a pass past the
// horizon drops it, and an ABORT marker's .txnindex entry with it (a stale entry would make a
// read_committed consumer skip the producer's later batches). A marker whose transaction kept a
// record stays, and a reopened log agrees.
TEST_P(compaction, test_spent_markers_get_a_delete_horizon_then_go_with_their_index_entries) {
    auto cfg = small_segments(300);
    cfg.cleanup = cleanup_policy::compact;
    cfg.delete_retention_ms = std::chrono::milliseconds(60'000);
    open(cfg);
    auto end_txn = [&](int64_t pid, bool commit) {
        auto m = make_marker(pid, 0, commit);
        auto at = _log->append(m, model::leader_epoch(0));
        EXPECT_TRUE(at);
        _log->set_high_watermark(_log->log_end_offset());
        return at ? at.value().base_offset.value() : -1;
    };
    auto put = [&](std::vector<uint8_t> b) {
        ASSERT_TRUE(_log->append(b, model::leader_epoch(0)));
    };
    put(txn_batch(5, 0, "k", "aborted"));
    const int64_t abort_at = end_txn(5, false);
    put(txn_batch(6, 0, "c", "old"));
    const int64_t spent_commit_at = end_txn(6, true);
    put(txn_batch(6, 1, "c", "new"));
    const int64_t live_commit_at = end_txn(6, true);
    for (int i = 0; i < 8; ++i) {
        append({{"filler" + std::to_string(i), "x"}, {"filler" + std::to_string(i), "y"}});
    }
    ASSERT_GT(_log->segment_count(), 2u);
    auto find = [](const std::vector<control_seen>& in, int64_t offset) {
        auto it = std::find_if(in.begin(), in.end(),
                               [&](const control_seen& c) { return c.offset == offset; });
        return it == in.end() ? std::optional<control_seen>() : std::optional(*it);
    };
    auto aborted_entries = [&] {
        auto a = _log->aborted_transactions(model::offset(0), _log->log_end_offset());
        EXPECT_TRUE(a);
        return a ? a.value().size() : size_t{99};
    };

    // Pass 1 drops the aborted record and the superseded committed one, but met them before
    // their markers: every marker stays as it was.
    ASSERT_TRUE(_log->compact());
    auto markers = control_batches(*_log);
    ASSERT_EQ(markers.size(), 3u);
    for (const auto& m : markers) {
        EXPECT_FALSE(m.horizon) << m.offset;
    }
    EXPECT_EQ(aborted_entries(), 1u);

    // Pass 2 meets no batch of the first two transactions: their markers get a horizon.
    ASSERT_TRUE(_log->compact());
    markers = control_batches(*_log);
    ASSERT_EQ(markers.size(), 3u);
    for (int64_t spent : {abort_at, spent_commit_at}) {
        auto m = find(markers, spent);
        ASSERT_TRUE(m) << spent;
        EXPECT_TRUE(m->horizon) << spent;
        EXPECT_EQ(m->base_timestamp, _now + 60'000) << spent;
    }
    ASSERT_TRUE(find(markers, live_commit_at));
    EXPECT_FALSE(find(markers, live_commit_at)->horizon);
    EXPECT_EQ(aborted_entries(), 1u);

    // Before the horizon nothing goes; past it both spent markers and the index entry go.
    _now += 59'000;
    ASSERT_TRUE(_log->compact());
    EXPECT_EQ(control_batches(*_log).size(), 3u);
    _now += 2'000;
    auto r = _log->compact();
    ASSERT_TRUE(r) << r.error().message();
    markers = control_batches(*_log);
    ASSERT_EQ(markers.size(), 1u);
    EXPECT_EQ(markers[0].offset, live_commit_at);
    EXPECT_EQ(aborted_entries(), 0u);
    for (const auto& de : fs::directory_iterator(_dir.path() / "t-0")) {
        auto name = de.path().filename().string();
        EXPECT_FALSE(name.ends_with(".txnindex")) << name << " kept an entry of a dropped marker";
        EXPECT_FALSE(name.ends_with(".cleaned") || name.ends_with(".swap")) << name;
    }
    auto after = read_all(*_log);
    EXPECT_TRUE(std::any_of(after.begin(), after.end(), [](const kv& e) {
        return e.key == "c" && e.value == "new";
    }));

    // A reopened log (recovery from the files) agrees.
    _log.reset();
    open(cfg);
    EXPECT_EQ(control_batches(*_log).size(), 1u);
    EXPECT_EQ(aborted_entries(), 0u);
}

// The cleaner stops at the last stable offset: a transaction still open supersedes nothing and
// nothing after its first record is cleaned; once it commits, its records compact like any.
TEST_P(compaction, test_cleaning_stops_at_an_open_transaction_until_it_ends) {
    auto cfg = small_segments(300);
    cfg.cleanup = cleanup_policy::compact;
    open(cfg);
    append({{"k", "v1"}});
    rec::batch_options o;
    o.codec = GetParam();
    o.producer_id = 7;
    o.producer_epoch = 0;
    o.base_sequence = 0;
    o.transactional = true;
    rec::batch_builder txn(o);
    txn.add(_now, rec::nullable_bytes::of(std::string_view("k")),
            rec::nullable_bytes::of(std::string_view("open")));
    auto bytes = txn.build();
    auto open_at = _log->append(bytes, model::leader_epoch(0));
    ASSERT_TRUE(open_at);
    _log->set_high_watermark(_log->log_end_offset());
    for (int i = 0; i < 16; ++i) {
        append({{"f", "x" + std::to_string(i)}});
    }
    ASSERT_GT(_log->segment_count(), 3u);
    EXPECT_EQ(_log->last_stable_offset(), open_at.value().base_offset);
    auto count_f = [&] {
        auto all = read_all(*_log);
        return std::count_if(all.begin(), all.end(), [](const kv& e) { return e.key == "f"; });
    };
    const auto f_before = count_f();
    auto r = _log->compact();
    ASSERT_TRUE(r) << r.error().message();
    auto after = read_all(*_log);
    auto has = [&](const std::vector<kv>& in, const std::string& key, const std::string& value) {
        return std::any_of(in.begin(), in.end(),
                           [&](const kv& e) { return e.key == key && e.value == value; });
    };
    EXPECT_TRUE(has(after, "k", "v1"));
    EXPECT_TRUE(has(after, "k", "open"));
    EXPECT_EQ(count_f(), f_before) << "segments past the last stable offset were cleaned";

    auto m = make_marker(7, 0, true);
    ASSERT_TRUE(_log->append(m, model::leader_epoch(0)));
    _log->set_high_watermark(_log->log_end_offset());
    for (int i = 0; i < 4; ++i) {
        append({{"g", "y" + std::to_string(i)}});
    }
    r = _log->compact();
    ASSERT_TRUE(r) << r.error().message();
    after = read_all(*_log);
    EXPECT_FALSE(has(after, "k", "v1"));  // superseded by the committed transactional record
    EXPECT_TRUE(has(after, "k", "open"));
    EXPECT_LT(count_f(), f_before);
}

TEST_P(compaction, test_tombstones_survive_until_delete_retention_ms) {
    auto cfg = small_segments(400);
    cfg.cleanup = cleanup_policy::compact;
    cfg.delete_retention_ms = std::chrono::milliseconds(10'000);
    open(cfg);
    append({{"k", "v1"}, {"other", "x"}});
    append({{"k", std::nullopt}});
    for (int i = 0; i < 8; ++i) {
        append({{"filler" + std::to_string(i), std::string(100, 'f')}});
    }
    ASSERT_TRUE(_log->compact());
    auto has = [&](const std::string& key, bool tombstone) {
        auto all = read_all(*_log);
        return std::any_of(all.begin(), all.end(), [&](const kv& e) {
            return e.key == key && (e.value == std::nullopt) == tombstone;
        });
    };
    EXPECT_FALSE(has("k", false));  // the old value is gone
    EXPECT_TRUE(has("k", true));    // the tombstone stays for now
    _now += 10'001;
    ASSERT_TRUE(_log->compact());
    EXPECT_FALSE(has("k", true));
    EXPECT_TRUE(has("other", false));
}

TEST_P(compaction, test_compacted_log_reopens_after_clean_and_unclean_shutdown) {
    auto cfg = small_segments(500);
    cfg.cleanup = cleanup_policy::compact;
    open(cfg);
    for (int i = 0; i < 20; ++i) {
        append({{"k" + std::to_string(i % 3), std::to_string(i)}});
    }
    ASSERT_TRUE(_log->compact());
    auto expected = read_all(*_log);
    auto leo = _log->log_end_offset();
    ASSERT_TRUE(_log->close());
    _log.reset();
    for (bool clean : {true, false}) {
        open_options o;
        o.clean_shutdown = clean;
        auto log = partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)}, cfg, o);
        ASSERT_TRUE(log);
        EXPECT_EQ(log.value()->log_end_offset(), leo);
        auto got = read_all(*log.value());
        ASSERT_EQ(got.size(), expected.size());
        for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].offset, expected[i].offset);
        }
    }
}

TEST_P(compaction, test_interrupted_swap_is_completed_at_open) {
    auto cfg = small_segments(500);
    cfg.cleanup = cleanup_policy::compact;
    open(cfg);
    for (int i = 0; i < 20; ++i) {
        append({{"k" + std::to_string(i % 3), std::to_string(i)}});
    }
    auto dir = _dir.path() / "t-0";
    ASSERT_TRUE(_log->close());
    _log.reset();
    // Simulate a crash between the two renames: a .swap holding a copy of segment 0, and a
    // stray .cleaned from a run that never reached its swap.
    auto log0 = dir / "00000000000000000000.log";
    fs::copy_file(log0, dir / "00000000000000000000.log.swap");
    fs::copy_file(log0, dir / "00000000000000000000.log.cleaned");
    auto log = partition_log::open(dir, {"t", model::partition_id(0)}, cfg, {});
    ASSERT_TRUE(log);
    EXPECT_FALSE(fs::exists(dir / "00000000000000000000.log.swap"));
    EXPECT_FALSE(fs::exists(dir / "00000000000000000000.log.cleaned"));
    EXPECT_EQ(log.value()->log_end_offset(), model::offset(20));
    EXPECT_EQ(read_all(*log.value()).size(), 20u);
}

TEST_P(compaction, test_clean_log_is_not_compacted_again_until_enough_is_dirty) {
    auto cfg = small_segments(300);
    cfg.cleanup = cleanup_policy::compact;
    open(cfg);
    _log->update_config([&] {
        auto c = cfg;
        c.min_cleanable_dirty_ratio = 0.5;
        return c;
    }());
    for (int i = 0; i < 12; ++i) {
        append({{"k" + std::to_string(i % 2), std::to_string(i)}});
    }
    auto first = _log->compact();
    ASSERT_TRUE(first);
    EXPECT_GT(first.value().segments_cleaned, 0u);
    // Nothing new: the cleanable bytes are all clean.
    EXPECT_EQ(_log->compact().value().segments_cleaned, 0u);
    EXPECT_EQ(_log->compact().value().records_removed, 0u);
}

// max.compaction.lag.ms (KIP-354): a dirty segment too small to reach the dirty ratio is
// compacted anyway once its first record has waited the lag, as Kafka's needCompactionNow.
TEST_P(compaction, test_max_compaction_lag_forces_a_pass_below_the_dirty_ratio) {
    auto cfg = small_segments(300);
    cfg.cleanup = cleanup_policy::compact;
    open(cfg);
    cfg.min_cleanable_dirty_ratio = 0.5;
    cfg.max_compaction_lag_ms = std::chrono::milliseconds(10'000);
    _log->update_config(cfg);
    // Distinct keys: the first pass keeps every record, so the clean bytes stay many.
    for (int i = 0; i < 30; ++i) {
        append({{"u" + std::to_string(i), std::to_string(i)}});
    }
    ASSERT_TRUE(_log->compact());
    const size_t segments = _log->segment_count();
    ASSERT_GE(segments, 6u);
    // Newer values of u0 until one of them is in a closed segment: a dirty segment or two (the
    // first from the start), far below half the cleanable bytes.
    _now += 1000;
    const auto first_late = _log->log_end_offset();
    while (_log->segment_count() == segments ||
           _log->segment_at(_log->segment_count() - 1).base_offset() <= first_late) {
        append({{"u0", "late"}});
    }
    EXPECT_EQ(_log->compact().value().segments_cleaned, 0u) << "below the ratio, not yet overdue";
    _now += 9'000;  // the dirty segment's first record is 10 s old: not past the lag yet
    EXPECT_EQ(_log->compact().value().segments_cleaned, 0u);
    _now += 1;
    auto forced = _log->compact();
    ASSERT_TRUE(forced);
    EXPECT_GT(forced.value().segments_cleaned, 0u);
    EXPECT_GT(forced.value().records_removed, 0u);  // u0's first value, at least
}

// A compacted log rolls its active segment at max.compaction.lag.ms when that is shorter than
// segment.ms (Kafka's LogConfig.maxSegmentMs); a delete-policy log keeps segment.ms.
TEST_P(compaction, test_max_compaction_lag_rolls_a_compacted_active_segment) {
    for (auto policy : {cleanup_policy::compact, cleanup_policy::del}) {
        temp_dir dir;
        auto cfg = small_segments(1 << 20);
        cfg.cleanup = policy;
        cfg.max_compaction_lag_ms = std::chrono::milliseconds(1000);
        open_options o;
        o.clock = [this] { return model::timestamp(_now); };
        auto log =
            partition_log::open(dir.path() / "t-0", {"t", model::partition_id(0)}, cfg, o).value();
        auto first = keyed_batch({{"a", "1"}}, _now, GetParam());
        auto second = keyed_batch({{"a", "2"}}, _now + 1001, GetParam());
        ASSERT_TRUE(log->append(first, model::leader_epoch(0)));
        ASSERT_TRUE(log->append(second, model::leader_epoch(0)));
        EXPECT_EQ(log->segment_count(), policy == cleanup_policy::compact ? 2u : 1u)
            << "policy " << int(policy);
    }
}

// Compaction empties whole segments and leaves gaps inside and at the end of others. A read at
// any offset in [log start, LEO) must return the first surviving batch at or after it (Kafka
// consumers skip gaps), and a consumer stepping with next_offset must reach the LEO.
TEST_P(compaction, test_reads_skip_segments_and_gaps_left_by_compaction) {
    auto cfg = small_segments(300);
    cfg.cleanup = cleanup_policy::compact;
    open(cfg);
    for (int i = 0; i < 24; ++i) {
        if (i % 7 == 3) {
            append({{"u" + std::to_string(i), "unique"}});
        } else {
            append({{"k", "v" + std::to_string(i)}});
        }
    }
    append({{"tail", "active"}});
    ASSERT_TRUE(_log->compact());
    auto check = [&](const partition_log& log) {
        bool emptied = false;
        for (size_t i = 0; i + 1 < log.segment_count(); ++i) {
            emptied = emptied || log.segment_at(i).empty();
        }
        EXPECT_TRUE(emptied) << "the test needs a segment emptied by compaction";
        std::vector<int64_t> surviving;
        for (const auto& e : read_all(log)) {
            surviving.push_back(e.offset);
        }
        auto leo = log.log_end_offset();
        for (auto o = log.log_start_offset(); o < leo; o = o + 1) {
            auto r = log.read(o, 1, leo, true);
            ASSERT_TRUE(r);
            ASSERT_FALSE(r.value().slices.empty()) << "offset " << o.value();
            auto bytes = slice_bytes(r.value().slices.front());
            auto b = batch_info::decode(bytes.data());
            auto first = *std::lower_bound(surviving.begin(), surviving.end(), o.value());
            EXPECT_LE(b.base_offset.value(), first) << "offset " << o.value();
            EXPECT_GE(b.last_offset().value(), first) << "offset " << o.value();
            EXPECT_GT(r.value().next_offset, o);
        }
        // A consumer fetching one batch at a time sees every survivor and reaches the end.
        std::vector<int64_t> seen;
        auto next = log.log_start_offset();
        while (next < leo) {
            auto r = log.read(next, 1, leo, true);
            ASSERT_TRUE(r);
            ASSERT_GT(r.value().next_offset, next);
            for (const auto& s : r.value().slices) {
                auto bytes = slice_bytes(s);
                seen.push_back(batch_info::decode(bytes.data()).last_offset().value());
            }
            next = r.value().next_offset;
        }
        EXPECT_EQ(seen, surviving);  // one record per batch here
    };
    check(*_log);
    ASSERT_TRUE(_log->close());
    _log.reset();
    for (bool clean : {true, false}) {
        open_options o;
        o.clean_shutdown = clean;
        auto log = partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)}, cfg, o);
        ASSERT_TRUE(log);
        check(*log.value());
    }
}

// The cleaner checkpoint: a pass reads only the dirty segments for its key map; with the clean
// offset carried across a restart, a clean log is not read again.
TEST_P(compaction, test_key_map_comes_from_dirty_segments_only) {
    auto cfg = small_segments(300);
    cfg.cleanup = cleanup_policy::compact;
    open(cfg);
    for (int i = 0; i < 16; ++i) {
        append({{"k" + std::to_string(i % 3), std::to_string(i)}});
    }
    auto first = _log->compact();
    ASSERT_TRUE(first);
    EXPECT_GT(first.value().bytes_scanned, 0u);
    auto cleaned = _log->cleaned_offset();
    EXPECT_GT(cleaned, model::offset(0));
    for (int i = 0; i < 16; ++i) {
        append({{"k" + std::to_string(i % 3), "again" + std::to_string(i)}});
    }
    uint64_t dirty = 0;
    for (size_t i = 0; i + 1 < _log->segment_count(); ++i) {
        if (_log->segment_at(i + 1).base_offset() > cleaned) {
            dirty += _log->segment_at(i).size();
        }
    }
    auto second = _log->compact();
    ASSERT_TRUE(second);
    // Only what was written after the first pass was read for keys...
    EXPECT_EQ(second.value().bytes_scanned, dirty);
    EXPECT_GT(_log->cleaned_offset(), cleaned);
    // ...and the closed segments still end up with one record per key.
    auto active_base = _log->segment_at(_log->segment_count() - 1).base_offset().value();
    std::map<std::string, int> per_key;
    for (const auto& e : read_all(*_log)) {
        if (e.offset < active_base) {
            EXPECT_EQ(++per_key[e.key], 1) << e.key;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(codecs, compaction,
                         ::testing::Values(rec::compression::none, rec::compression::zstd,
                                           rec::compression::lz4),
                         [](const auto& info) { return std::string(rec::to_string(info.param)); });

}  // namespace
}  // namespace spool::broker::storage
