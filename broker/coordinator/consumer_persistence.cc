// Writing and replaying the KIP-848 consumer-group records (consumer_record_codec.h).

#include "broker/coordinator/consumer_persistence.h"

#include "broker/coordinator/consumer_record_codec.h"
#include "broker/coordinator/group_coordinator.h"
#include "broker/coordinator/record_codec.h"
#include "common/log.h"

namespace spool::broker::coordinator {

namespace {

void tombstone(std::vector<log_record>& out, consumer_record type, const std::string& group,
               const std::string& member = {}) {
    out.push_back({encode_consumer_key(type, group, member), std::nullopt});
}

}  // namespace

void group_coordinator::store_consumer_group(const group& g,
                                             const std::vector<std::string>& members,
                                             const std::vector<std::string>& removed) {
    const consumer_group_data* cg = g.consumer();
    if (!cg) {
        return;
    }
    std::vector<log_record> records;
    const std::string& id = g.id();
    for (const auto& member : removed) {
        if (cg->members.contains(member)) {
            continue;
        }
        tombstone(records, consumer_record::current_assignment, id, member);
        tombstone(records, consumer_record::target_member, id, member);
        tombstone(records, consumer_record::member_metadata, id, member);
    }
    for (const auto& member : members) {
        auto it = cg->members.find(member);
        if (it != cg->members.end()) {
            records.push_back({encode_consumer_key(consumer_record::member_metadata, id, member),
                               encode_member_metadata(it->second)});
        }
    }
    auto& mutable_cg = const_cast<consumer_group_data&>(*cg);
    if (cg->stored_group_epoch != cg->group_epoch) {
        records.push_back({encode_consumer_key(consumer_record::group_metadata, id),
                           encode_group_epoch(cg->group_epoch)});
        mutable_cg.stored_group_epoch = cg->group_epoch;
    }
    if (!cg->target_stored) {
        for (const auto& [member, target] : cg->target) {
            records.push_back({encode_consumer_key(consumer_record::target_member, id, member),
                               encode_target_member(target)});
        }
        records.push_back({encode_consumer_key(consumer_record::target_metadata, id),
                           encode_target_epoch(cg->assignment_epoch)});
        mutable_cg.target_stored = true;
    }
    for (const auto& member : members) {
        auto it = cg->members.find(member);
        if (it != cg->members.end()) {
            records.push_back(
                {encode_consumer_key(consumer_record::current_assignment, id, member),
                 encode_current_assignment(it->second)});
        }
    }
    if (records.empty()) {
        return;
    }
    _log.append(std::move(records), [partition = _partition, id](std::error_code ec) {
        if (ec) {
            log::get("coordinator")
                ->warn("__consumer_offsets-{}: storing consumer group {} failed: {}", partition,
                       id, ec.message());
        }
    });
}

void group_coordinator::append_group_tombstones(const group& g,
                                                std::vector<log_record>& out) const {
    const consumer_group_data* cg = g.consumer();
    if (!cg) {
        out.push_back({encode_group_key(g.id()), std::nullopt});
        return;
    }
    for (const auto& [member, _] : cg->members) {
        tombstone(out, consumer_record::current_assignment, g.id(), member);
        tombstone(out, consumer_record::member_metadata, g.id(), member);
    }
    for (const auto& [member, _] : cg->target) {
        tombstone(out, consumer_record::target_member, g.id(), member);
    }
    tombstone(out, consumer_record::target_metadata, g.id());
    tombstone(out, consumer_record::partition_metadata, g.id());
    tombstone(out, consumer_record::group_metadata, g.id());
}

void consumer_replay::add(const consumer_key& key, std::optional<std::span<const uint8_t>> value) {
    auto& gr = groups[key.group];
    std::optional<bytes_t> v;
    if (value) {
        v.emplace(value->begin(), value->end());
    }
    switch (key.type) {
        case consumer_record::group_metadata:
            gr.group_epoch = std::move(v);
            gr.seen = true;
            break;
        case consumer_record::target_metadata:
            gr.target_epoch = std::move(v);
            break;
        case consumer_record::member_metadata:
            gr.member_metadata[key.member] = std::move(v);
            break;
        case consumer_record::target_member:
            gr.target_member[key.member] = std::move(v);
            break;
        case consumer_record::current_assignment:
            gr.current[key.member] = std::move(v);
            break;
        case consumer_record::partition_metadata:
            break;  // Spool recomputes what the subscriptions resolve to
    }
}

size_t group_coordinator::restore_consumer_groups(consumer_replay& replay) {
    const time_ms now = _clock.now();
    size_t skipped = 0;
    for (auto& [id, gr] : replay.groups) {
        if (!gr.group_epoch) {
            continue;  // deleted (or never had its epoch record)
        }
        auto epoch = decode_epoch(*gr.group_epoch);
        if (!epoch) {
            ++skipped;
            continue;
        }
        group& g = get_or_create(id);
        if (!g.empty()) {
            continue;  // a classic group with members wrote later: it is the live one
        }
        auto& cg = g.make_consumer();
        cg.group_epoch = epoch.value();
        cg.stored_group_epoch = epoch.value();
        if (gr.target_epoch) {
            if (auto te = decode_epoch(*gr.target_epoch)) {
                cg.assignment_epoch = te.value();
            }
        }
        cg.target_stored = true;
        cg.subscribed_metadata_known = false;
        for (auto& [member_id, meta] : gr.member_metadata) {
            if (!meta) {
                continue;
            }
            consumer_member m;
            m.id = member_id;
            if (decode_member_metadata(*meta, m)) {
                ++skipped;
                continue;
            }
            auto cur = gr.current.find(member_id);
            if (cur != gr.current.end() && cur->second &&
                decode_current_assignment(*cur->second, m)) {
                ++skipped;
            }
            if (m.instance_id) {
                cg.static_members[*m.instance_id] = member_id;
            }
            // The members get a full session to find the (possibly new) coordinator.
            m.session_deadline = now + time_ms(settings_of(id).consumer_session_timeout_ms);
            auto& added = cg.members.emplace(member_id, std::move(m)).first->second;
            arm_consumer_timer(g, added);
        }
        for (auto& [member_id, t] : gr.target_member) {
            if (!t || !cg.members.contains(member_id)) {
                continue;
            }
            if (auto a = decode_target_member(*t)) {
                cg.target[member_id] = std::move(a.value());
            } else {
                ++skipped;
            }
        }
        g.transition(cg.members.empty() ? group_state::empty : group_state::stable, now);
    }
    return skipped;
}

}  // namespace spool::broker::coordinator
