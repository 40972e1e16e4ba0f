#include "tests/compat/rdkafkacpp/rdkafka_admin.h"

#include <memory>

namespace spool::compat {
namespace {

// Owners for the C API's objects, so that every early return frees what was allocated.
struct event_deleter {
    void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
};
struct options_deleter {
    void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
};
using event_ptr = std::unique_ptr<rd_kafka_event_t, event_deleter>;
using options_ptr = std::unique_ptr<rd_kafka_AdminOptions_t, options_deleter>;

std::string topic_results_error(const rd_kafka_topic_result_t** results, size_t count) {
    std::string error;
    for (size_t i = 0; i < count; ++i) {
        if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            const char* text = rd_kafka_topic_result_error_string(results[i]);
            error += std::string(rd_kafka_topic_result_name(results[i])) + ": " +
                     rd_kafka_err2name(rd_kafka_topic_result_error(results[i])) + " " +
                     (text ? text : "") + "; ";
        }
    }
    return error;
}

std::string resource_results_error(const rd_kafka_ConfigResource_t** results, size_t count) {
    std::string error;
    for (size_t i = 0; i < count; ++i) {
        if (rd_kafka_ConfigResource_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            const char* text = rd_kafka_ConfigResource_error_string(results[i]);
            error += std::string(rd_kafka_ConfigResource_name(results[i])) + ": " +
                     rd_kafka_err2name(rd_kafka_ConfigResource_error(results[i])) + " " +
                     (text ? text : "") + "; ";
        }
    }
    return error;
}

}  // namespace

rdkafka_admin::rdkafka_admin(rd_kafka_t* handle, std::chrono::milliseconds timeout)
    : _handle(handle), _queue(rd_kafka_queue_new(handle)), _timeout(timeout) {}

rdkafka_admin::~rdkafka_admin() {
    rd_kafka_queue_destroy(_queue);
}

rd_kafka_AdminOptions_t* rdkafka_admin::options(rd_kafka_admin_op_t op) {
    rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(_handle, op);
    char errstr[256];
    rd_kafka_AdminOptions_set_request_timeout(opts, static_cast<int>(_timeout.count()), errstr,
                                              sizeof errstr);
    if (op == RD_KAFKA_ADMIN_OP_CREATETOPICS || op == RD_KAFKA_ADMIN_OP_DELETETOPICS ||
        op == RD_KAFKA_ADMIN_OP_CREATEPARTITIONS) {
        // Wait for the controller to finish, as kafka-topics does, so metadata reflects the change.
        rd_kafka_AdminOptions_set_operation_timeout(opts, static_cast<int>(_timeout.count()),
                                                    errstr, sizeof errstr);
    }
    return opts;
}

std::string rdkafka_admin::await(rd_kafka_event_type_t expected, rd_kafka_event_t** event_out) {
    rd_kafka_event_t* event =
        rd_kafka_queue_poll(_queue, static_cast<int>(_timeout.count()) + 5000);
    if (event == nullptr) {
        return "no admin result within the timeout";
    }
    if (rd_kafka_event_type(event) != expected) {
        std::string error = std::string("unexpected event ") + rd_kafka_event_name(event);
        rd_kafka_event_destroy(event);
        return error;
    }
    if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        std::string error = rd_kafka_event_error_string(event);
        rd_kafka_event_destroy(event);
        return error;
    }
    *event_out = event;
    return "";
}

std::string rdkafka_admin::create_topic(
    const std::string& topic, int partitions,
    const std::vector<std::pair<std::string, std::string>>& configs) {
    char errstr[256];
    rd_kafka_NewTopic_t* new_topic =
        rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, errstr, sizeof errstr);
    if (new_topic == nullptr) {
        return errstr;
    }
    for (const auto& [name, value] : configs) {
        rd_kafka_NewTopic_set_config(new_topic, name.c_str(), value.c_str());
    }
    options_ptr opts(options(RD_KAFKA_ADMIN_OP_CREATETOPICS));
    rd_kafka_CreateTopics(_handle, &new_topic, 1, opts.get(), _queue);
    rd_kafka_NewTopic_destroy(new_topic);
    rd_kafka_event_t* raw = nullptr;
    if (std::string error = await(RD_KAFKA_EVENT_CREATETOPICS_RESULT, &raw); !error.empty()) {
        return error;
    }
    event_ptr event(raw);
    size_t count = 0;
    const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(
        rd_kafka_event_CreateTopics_result(event.get()), &count);
    return count == 1 ? topic_results_error(results, count) : "expected one topic result";
}

std::string rdkafka_admin::delete_topic(const std::string& topic) {
    rd_kafka_DeleteTopic_t* del = rd_kafka_DeleteTopic_new(topic.c_str());
    options_ptr opts(options(RD_KAFKA_ADMIN_OP_DELETETOPICS));
    rd_kafka_DeleteTopics(_handle, &del, 1, opts.get(), _queue);
    rd_kafka_DeleteTopic_destroy(del);
    rd_kafka_event_t* raw = nullptr;
    if (std::string error = await(RD_KAFKA_EVENT_DELETETOPICS_RESULT, &raw); !error.empty()) {
        return error;
    }
    event_ptr event(raw);
    size_t count = 0;
    const rd_kafka_topic_result_t** results = rd_kafka_DeleteTopics_result_topics(
        rd_kafka_event_DeleteTopics_result(event.get()), &count);
    return count == 1 ? topic_results_error(results, count) : "expected one topic result";
}

std::string rdkafka_admin::create_partitions(const std::string& topic, int total) {
    char errstr[256];
    rd_kafka_NewPartitions_t* parts =
        rd_kafka_NewPartitions_new(topic.c_str(), total, errstr, sizeof errstr);
    if (parts == nullptr) {
        return errstr;
    }
    options_ptr opts(options(RD_KAFKA_ADMIN_OP_CREATEPARTITIONS));
    rd_kafka_CreatePartitions(_handle, &parts, 1, opts.get(), _queue);
    rd_kafka_NewPartitions_destroy(parts);
    rd_kafka_event_t* raw = nullptr;
    if (std::string error = await(RD_KAFKA_EVENT_CREATEPARTITIONS_RESULT, &raw); !error.empty()) {
        return error;
    }
    event_ptr event(raw);
    size_t count = 0;
    const rd_kafka_topic_result_t** results = rd_kafka_CreatePartitions_result_topics(
        rd_kafka_event_CreatePartitions_result(event.get()), &count);
    return count == 1 ? topic_results_error(results, count) : "expected one topic result";
}

std::string rdkafka_admin::alter_topic_configs(
    const std::string& topic, const std::vector<std::pair<std::string, std::string>>& configs) {
    rd_kafka_ConfigResource_t* resource =
        rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
    for (const auto& [name, value] : configs) {
        rd_kafka_ConfigResource_set_config(resource, name.c_str(), value.c_str());
    }
    options_ptr opts(options(RD_KAFKA_ADMIN_OP_ALTERCONFIGS));
    rd_kafka_AlterConfigs(_handle, &resource, 1, opts.get(), _queue);
    rd_kafka_ConfigResource_destroy(resource);
    rd_kafka_event_t* raw = nullptr;
    if (std::string error = await(RD_KAFKA_EVENT_ALTERCONFIGS_RESULT, &raw); !error.empty()) {
        return error;
    }
    event_ptr event(raw);
    size_t count = 0;
    const rd_kafka_ConfigResource_t** results = rd_kafka_AlterConfigs_result_resources(
        rd_kafka_event_AlterConfigs_result(event.get()), &count);
    return count == 1 ? resource_results_error(results, count) : "expected one resource result";
}

std::map<std::string, config_value> rdkafka_admin::describe_topic_configs(const std::string& topic,
                                                                          std::string& error) {
    std::map<std::string, config_value> result;
    rd_kafka_ConfigResource_t* resource =
        rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
    options_ptr opts(options(RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS));
    rd_kafka_DescribeConfigs(_handle, &resource, 1, opts.get(), _queue);
    rd_kafka_ConfigResource_destroy(resource);
    rd_kafka_event_t* raw = nullptr;
    error = await(RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT, &raw);
    if (!error.empty()) {
        return result;
    }
    event_ptr event(raw);
    size_t count = 0;
    const rd_kafka_ConfigResource_t** resources = rd_kafka_DescribeConfigs_result_resources(
        rd_kafka_event_DescribeConfigs_result(event.get()), &count);
    error = count == 1 ? resource_results_error(resources, count) : "expected one resource result";
    if (!error.empty()) {
        return result;
    }
    size_t entries = 0;
    const rd_kafka_ConfigEntry_t** configs =
        rd_kafka_ConfigResource_configs(resources[0], &entries);
    for (size_t i = 0; i < entries; ++i) {
        const char* value = rd_kafka_ConfigEntry_value(configs[i]);
        result[rd_kafka_ConfigEntry_name(configs[i])] =
            config_value{value ? value : "", rd_kafka_ConfigEntry_source(configs[i]),
                         rd_kafka_ConfigEntry_is_default(configs[i]) != 0};
    }
    return result;
}

}  // namespace spool::compat
