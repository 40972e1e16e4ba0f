#include "operator/builders/statefulset.h"

#include "operator/builders/common.h"
#include "operator/builders/config_map.h"
#include "operator/builders/security.h"

#include <fmt/format.h>

namespace spool::op::builders {

namespace {

json field_env(const char* name, const char* path) {
    return obj(
        {{"name", str(name)}, {"valueFrom", obj({{"fieldRef", obj({{"fieldPath", str(path)}})}})}});
}

// HTTPS on a secured Cluster: the kubelet does not verify the certificate, and the probes'
// paths need no credentials.
json probe(const api::cluster& c, const char* path, int period, int failures) {
    json get = obj({{"path", str(path)}, {"port", str("http")}});
    if (api::is_secured(c)) {
        get["scheme"] = str("HTTPS");
    }
    return obj({{"httpGet", get},
                {"periodSeconds", num(period)},
                {"timeoutSeconds", num(3)},
                {"failureThreshold", num(failures)}});
}

json affinity(const api::cluster& c) {
    json term = obj({{"labelSelector", obj({{"matchLabels", from_string_map(selector_labels(c))}})},
                     {"topologyKey", str("kubernetes.io/hostname")}});
    switch (c.spec.affinity) {
        case api::anti_affinity::required:
            return obj({{"podAntiAffinity",
                         obj({{"requiredDuringSchedulingIgnoredDuringExecution", arr({term})}})}});
        case api::anti_affinity::preferred:
            return obj({{"podAntiAffinity",
                         obj({{"preferredDuringSchedulingIgnoredDuringExecution",
                               arr({obj({{"weight", num(100)}, {"podAffinityTerm", term}})})}})}});
        case api::anti_affinity::none:
            break;
    }
    return json::object();
}

// With an external listener the advertised EXTERNAL port (NodePort: nodePortBase + ordinal) or
// host (LoadBalancer: the address the operator wrote into external-hosts) differs per broker,
// which neither the downward API nor $(VAR) expansion can compute: the image's /bin/sh does, then
// execs the broker (which so gets the signals itself). "$$" is the kubelet's escape for a
// literal "$(" (it expands $(VAR) in commands): the shell gets $(( )) and $( ) as written.
std::string external_start_script(const api::cluster& c, const std::string& advertised) {
    const auto& ext = c.spec.external_listener;
    std::string broker = fmt::format(
        "exec /usr/local/bin/spool-broker --config=/etc/spool/{} --override=node.id=$NODE_ID "
        "\"--override=broker.rack=$BROKER_RACK\" \"--override=advertised.listeners={},{}://",
        broker_config_file, advertised, external_listener_name);
    if (ext.type == api::external_type::node_port) {
        return broker + fmt::format("$EXTERNAL_HOST:$$(({} + NODE_ID))\"\n", ext.node_port_base);
    }
    return fmt::format(
               "until host=$$(sed -n \"s/^$NODE_ID=//p\" /etc/spool/{0}) && [ -n \"$host\" ]; do\n"
               "  echo \"broker $NODE_ID: waiting for its LoadBalancer address in "
               "/etc/spool/{0}\"\n"
               "  sleep 5\n"
               "done\n",
               external_hosts_file) +
           broker + fmt::format("$host:{}\"\n", ext.port);
}

json broker_container(const api::cluster& c) {
    // $(VAR) is expanded by the kubelet from the container's env (downward API below).
    std::string advertised =
        fmt::format("{}://$(POD_NAME).{}.$(POD_NAMESPACE).svc:{}", internal_listener_name(c),
                    headless_service_name(c), c.spec.kafka_port);
    const bool secured = api::is_secured(c);
    if (secured) {
        advertised += fmt::format(",{}://$(POD_NAME).{}.$(POD_NAMESPACE).svc:{}",
                                  replication_listener_name, headless_service_name(c),
                                  c.spec.replication_port);
    }
    json ports = arr({obj({{"name", str("kafka")},
                           {"containerPort", num(c.spec.kafka_port)},
                           {"protocol", str("TCP")}}),
                      obj({{"name", str("http")},
                           {"containerPort", num(c.spec.http_port)},
                           {"protocol", str("TCP")}})});
    if (secured) {
        ports[ports.size()] = obj({{"name", str("replication")},
                                   {"containerPort", num(c.spec.replication_port)},
                                   {"protocol", str("TCP")}});
    }
    if (c.spec.pod_address_listener.enabled) {
        advertised += fmt::format(",{}://$(POD_IP):{}", pod_address_listener_name,
                                  c.spec.pod_address_listener.port);
        ports[ports.size()] = obj({{"name", str("kafka-pod")},
                                   {"containerPort", num(c.spec.pod_address_listener.port)},
                                   {"protocol", str("TCP")}});
    }
    // BROKER_RACK: the zone of the pod's node, which Kubernetes 1.35+ copies onto the pod when it
    // is bound (KEP-4742, pod topology labels); empty on older clusters or an unlabelled node,
    // and an empty broker.rack is no rack.
    json env =
        arr({field_env("POD_NAME", "metadata.name"),
             field_env("POD_NAMESPACE", "metadata.namespace"), field_env("POD_IP", "status.podIP"),
             field_env("NODE_ID", "metadata.labels['apps.kubernetes.io/pod-index']"),
             field_env("BROKER_RACK", "metadata.labels['topology.kubernetes.io/zone']")});
    json command = json::null();
    json args = arr({str("--config=/etc/spool/broker.yaml"), str("--override=node.id=$(NODE_ID)"),
                     str("--override=broker.rack=$(BROKER_RACK)"),
                     str("--override=advertised.listeners=" + advertised)});
    const auto& ext = c.spec.external_listener;
    if (ext.enabled) {
        ports[ports.size()] = obj({{"name", str("kafka-external")},
                                   {"containerPort", num(ext.port)},
                                   {"protocol", str("TCP")}});
        if (ext.type == api::external_type::node_port) {
            env[env.size()] =
                ext.advertised_host.empty()
                    ? field_env("EXTERNAL_HOST", "status.hostIP")
                    : obj({{"name", str("EXTERNAL_HOST")}, {"value", str(ext.advertised_host)}});
        }
        // The shell reads the same variables the kubelet would have expanded.
        std::string shell_advertised = advertised;
        for (const char* var : {"POD_NAME", "POD_NAMESPACE", "POD_IP"}) {
            std::string from = fmt::format("$({})", var), to = fmt::format("${}", var);
            for (size_t at; (at = shell_advertised.find(from)) != std::string::npos;) {
                shell_advertised.replace(at, from.size(), to);
            }
        }
        command = arr({str("/bin/sh"), str("-c"), str(external_start_script(c, shell_advertised))});
        args = json::null();
    }
    json container = obj(
        {{"name", str("broker")},
         {"image", str(c.spec.image)},
         {"imagePullPolicy", str(c.spec.image_pull_policy)},
         {"env", env},
         {"ports", ports},
         {"readinessProbe", probe(c, "/readyz", 5, 3)},
         {"livenessProbe", probe(c, "/healthz", 10, 6)},
         {"startupProbe", probe(c, "/healthz", 5, 60)},
         {"volumeMounts", arr({obj({{"name", str("data")}, {"mountPath", str("/var/lib/spool")}}),
                               obj({{"name", str("config")},
                                    {"mountPath", str("/etc/spool")},
                                    {"readOnly", boolean(true)}})})},
         {"securityContext", obj({{"allowPrivilegeEscalation", boolean(false)},
                                  {"readOnlyRootFilesystem", boolean(true)},
                                  {"capabilities", obj({{"drop", arr({str("ALL")})}})}})}});
    if (secured) {
        auto& mounts = container["volumeMounts"];
        mounts[mounts.size()] = obj({{"name", str("tls")},
                                     {"mountPath", str(tls_mount_path)},
                                     {"readOnly", boolean(true)}});
    }
    if (json v = etcd_tls_volume(c); !v.is_null()) {
        auto& mounts = container["volumeMounts"];
        mounts[mounts.size()] = obj({{"name", str(etcd_tls_volume_name)},
                                     {"mountPath", str(etcd_tls_mount_path)},
                                     {"readOnly", boolean(true)}});
    }
    if (command.is_null()) {
        container["args"] = args;
    } else {
        container["command"] = command;
    }
    if (c.spec.resources.is_object() && c.spec.resources.size() > 0) {
        container["resources"] = c.spec.resources;
    }
    return container;
}

}  // namespace

json build_pod_template(const api::cluster& c) {
    json pod_spec =
        obj({{"containers", arr({broker_container(c)})},
             {"volumes", arr({obj({{"name", str("config")},
                                   {"configMap", obj({{"name", str(config_map_name(c))}})}})})},
             {"terminationGracePeriodSeconds", num(120)},
             // With the container's settings this meets Pod Security `restricted`, which
             // requires a seccomp profile: RuntimeDefault is the runtime's own.
             {"securityContext", obj({{"runAsNonRoot", boolean(true)},
                                      {"runAsUser", num(10001)},
                                      {"fsGroup", num(10001)},
                                      {"seccompProfile", obj({{"type", str("RuntimeDefault")}})}})},
             {"topologySpreadConstraints",
              arr({obj({{"maxSkew", num(1)},
                        {"topologyKey", str(c.spec.topology_key)},
                        {"whenUnsatisfiable", str("ScheduleAnyway")},
                        {"labelSelector",
                         obj({{"matchLabels", from_string_map(selector_labels(c))}})}})})}});
    if (api::is_secured(c)) {
        auto& volumes = pod_spec["volumes"];
        volumes[volumes.size()] =
            obj({{"name", str("tls")},
                 {"secret", obj({{"secretName", str(broker_certs_secret_name(c))},
                                 {"defaultMode", num(0440)}})}});
    }
    if (json v = etcd_tls_volume(c); !v.is_null()) {
        auto& volumes = pod_spec["volumes"];
        volumes[volumes.size()] = std::move(v);
    }
    const auto& t = c.spec.pod_template;
    json aff = affinity(c);
    // spec.podTemplate.affinity replaces the built-in anti-affinity key by key.
    if (t.affinity.is_object()) {
        for (const auto& [key, value] : t.affinity.as_object()) {
            aff[key] = value;
        }
    }
    if (aff.size() > 0) {
        pod_spec["affinity"] = aff;
    }
    if (!c.spec.node_selector.empty()) {
        pod_spec["nodeSelector"] = from_string_map(c.spec.node_selector);
    }
    if (t.tolerations.is_array() && t.tolerations.size() > 0) {
        pod_spec["tolerations"] = t.tolerations;
    }
    if (t.topology_spread_constraints.is_array()) {
        pod_spec["topologySpreadConstraints"] = t.topology_spread_constraints;
    }
    if (!t.priority_class_name.empty()) {
        pod_spec["priorityClassName"] = str(t.priority_class_name);
    }
    if (t.termination_grace_period_seconds) {
        pod_spec["terminationGracePeriodSeconds"] = num(*t.termination_grace_period_seconds);
    }
    auto labels = object_labels(c);
    for (const auto& [k, v] : t.labels) {
        labels.emplace(k, v);  // never over the operator's (validation refuses the selector's)
    }
    json annotations = obj({{config_hash_annotation, str(config_hash(c))},
                            {"prometheus.io/scrape", str("true")},
                            {"prometheus.io/port", str(std::to_string(c.spec.http_port))},
                            {"prometheus.io/path", str("/metrics")}});
    for (const auto& [k, v] : t.annotations) {
        if (!annotations.has_field(k)) {
            annotations[k] = str(v);
        }
    }
    return obj(
        {{"metadata", obj({{"labels", from_string_map(labels)}, {"annotations", annotations}})},
         {"spec", pod_spec}});
}

json build_statefulset(const api::cluster& c) {
    json claim_spec =
        obj({{"accessModes", arr({str("ReadWriteOnce")})},
             {"resources", obj({{"requests", obj({{"storage", str(c.spec.storage_size)}})}})}});
    if (!c.spec.storage_class.empty()) {
        claim_spec["storageClassName"] = str(c.spec.storage_class);
    }
    return obj(
        {{"apiVersion", str("apps/v1")},
         {"kind", str("StatefulSet")},
         {"metadata", object_metadata(c, statefulset_name(c))},
         {"spec",
          obj({{"replicas", num(c.spec.replicas)},
               {"serviceName", str(headless_service_name(c))},
               {"podManagementPolicy", str("Parallel")},
               {"updateStrategy", obj({{"type", str("OnDelete")}})},
               {"persistentVolumeClaimRetentionPolicy",
                obj({{"whenDeleted", str("Retain")}, {"whenScaled", str("Retain")}})},
               {"selector", obj({{"matchLabels", from_string_map(selector_labels(c))}})},
               {"template", build_pod_template(c)},
               {"volumeClaimTemplates",
                arr({obj({{"apiVersion", str("v1")},
                          {"kind", str("PersistentVolumeClaim")},
                          {"metadata", obj({{"name", str("data")},
                                            {"labels", from_string_map(selector_labels(c))}})},
                          {"spec", claim_spec}})})}})}});
}

}  // namespace spool::op::builders
