#!/usr/bin/env bash
# The Helm chart (charts/spool) against the real kube-apiserver of the e2e fixture:
#   helm_test.sh lint      SRC            helm lint --strict; the chart's CRDs equal crds/
#   helm_test.sh template  SRC CP_DIR     helm template, then a server-side dry-run apply of every
#                                         object (the API server validates schemas and admission);
#                                         a 3-member etcd: peers, PDB, every member's endpoint
#   helm_test.sh install   SRC CP_DIR     helm install: CRDs, Deployment, ServiceAccount, RBAC
#                                         exist as rendered and grant what the operator needs;
#                                         the etcd CA survives helm upgrade; helm uninstall
#                                         removes them again
# helm comes from scripts/peers/fetch-helm.sh (built from the Go module proxy, cached). No kubelet
# runs, so the operator's pods never start: the test asserts the objects, not running pods.
set -euo pipefail
mode=$1 src=$2 cp_dir=${3:-}
helm="$("$src/scripts/peers/fetch-helm.sh")/bin/helm"
# kubectl at the control plane's version (scripts/k8s/build.sh), set by CTest for the modes that
# talk to the control plane (lint does not).
kubectl=${SPOOL_KUBECTL:-}
chart=$src/charts/spool
# Private helm state: tests never read or write the user's helm config or cache.
export HELM_CONFIG_HOME HELM_CACHE_HOME HELM_DATA_HOME
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
HELM_CONFIG_HOME=$tmp/config HELM_CACHE_HOME=$tmp/cache HELM_DATA_HOME=$tmp/data

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_eq() {  # expect_eq WHAT ACTUAL EXPECTED
    [[ "$2" == "$3" ]] || fail "$1: got '$2', want '$3'"
    echo "ok: $1 = $3"
}

kc() {
    [[ -x "$kubectl" ]] || fail "no kubectl at '$kubectl' (SPOOL_KUBECTL): run scripts/k8s/build.sh"
    "$kubectl" --kubeconfig "$cp_dir/kubeconfig" "$@"
}
hm() { "$helm" --kubeconfig "$cp_dir/kubeconfig" "$@"; }
unique() { echo "$1-$$-$RANDOM"; }

case $mode in
lint)
    "$helm" lint --strict "$chart"
    "$helm" lint --strict "$chart" --set watchNamespace=team-a --set applyCRDs=false
    "$helm" lint --strict "$chart" --set etcd.replicas=3 --set networkPolicy.enabled=true
    "$helm" lint --strict "$chart" --set etcd.tls.enabled=false
    # Values platform teams expect: a parent chart's global registry and pull secrets, an
    # existing ServiceAccount, a PriorityClass, the security contexts.
    "$helm" template r "$chart" --namespace team-a --kube-version v1.37.0 \
        --set global.imageRegistry=mirror.example --set 'global.imagePullSecrets[0].name=from-parent' \
        --set 'imagePullSecrets[0].name=own' --set serviceAccount.create=false \
        --set serviceAccount.name=platform-sa --set priorityClassName=platform-critical \
        --set podSecurityContext.runAsUser=20002 >"$tmp/platform.yaml"
    operator=$(awk '/^kind: Deployment/,0' "$tmp/platform.yaml")
    grep -q 'image: "mirror.example/ghcr.io/spool-dev/spool-operator:' <<<"$operator" ||
        fail "global.imageRegistry is not in front of the operator image"
    grep -q -- '--default-broker-image=mirror.example/ghcr.io/spool-dev/spool-broker:' <<<"$operator" ||
        fail "the default broker image is not the chart's broker.image behind global.imageRegistry"
    for want in 'serviceAccountName: platform-sa' 'priorityClassName: platform-critical' \
        '- name: from-parent' '- name: own' 'runAsUser: 20002'; do
        grep -qF -- "$want" <<<"$operator" || fail "the operator Deployment lacks '$want'"
    done
    ! grep -q '^kind: ServiceAccount' "$tmp/platform.yaml" ||
        fail "serviceAccount.create=false still renders a ServiceAccount"
    [ "$(grep -c 'name: platform-sa' "$tmp/platform.yaml")" -ge 3 ] ||
        fail "the RBAC bindings do not name serviceAccount.name"
    echo "ok: global, broker.image, serviceAccount, priorityClassName and security context values"
    diff -r "$src/crds" "$chart/crds" || fail "charts/spool/crds differs from crds/"
    echo "ok: chart CRDs equal crds/"
    ;;
template)
    ns=$(unique helm-template)
    # helm template renders offline against Kubernetes v1.20 unless told: use the server's
    # major.minor (a control plane built from the module proxy reports no real gitVersion).
    server_version=$(kc get --raw /version | python3 -c 'import json,sys
v = json.load(sys.stdin)
print("v%s.%s.0" % (v["major"], v["minor"].rstrip("+")))')
    kc create namespace "$ns" >/dev/null
    trap 'kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
    # The second set also renders the chart's NetworkPolicies (operator, etcd).
    for values in "" "--set watchNamespace=$ns --set applyCRDs=false --set networkPolicy.enabled=true" \
                  "--set etcd.replicas=3 --set networkPolicy.enabled=true"; do
        # shellcheck disable=SC2086
        "$helm" template "$(unique t)" "$chart" --namespace "$ns" --include-crds \
            --kube-version "$server_version" $values \
            >"$tmp/rendered.yaml"
        kinds=$(grep -c '^kind:' "$tmp/rendered.yaml")
        ((kinds >= 8)) || fail "only $kinds objects rendered ($values)"
        kc apply --server-side --dry-run=server --field-manager helm-e2e -n "$ns" \
            -f "$tmp/rendered.yaml" >"$tmp/applied.txt"
        applied=$(grep -c 'serverside-applied (server dry run)' "$tmp/applied.txt" || true)
        expect_eq "objects accepted by the API server (dry run, values: ${values:-defaults})" \
            "$applied" "$kinds"
    done
    # The last set (3 etcd members): peers over TLS from the stable names, every member an
    # endpoint of the operator's default, a PDB, and the peer port open to the members only.
    r=$tmp/rendered.yaml
    grep -q -- "--initial-cluster=t-[^=]*-etcd-0=https://[^,]*-etcd-0\.[^,]*:2380,.*-etcd-1=https.*-etcd-2=https" "$r" ||
        fail "3-member etcd: no --initial-cluster of three https peers"
    grep -q -- "--peer-client-cert-auth" "$r" || fail "3-member etcd: peers do not require certificates"
    grep -q -- "--client-cert-auth" "$r" || fail "etcd: clients do not require certificates"
    expect_eq "operator's default etcd endpoints (3 members, https)" \
        "$(grep -o -- '--default-etcd-endpoints=[^ ]*' "$r" | tr ',' '\n' | grep -c '^.*https://.*-etcd-[0-2]\.')" 3
    grep -q -- "--default-etcd-ca-secret=$ns/" "$r" || fail "the operator is not given the etcd CA Secret"
    expect_eq "etcd PodDisruptionBudget (maxUnavailable 1)" \
        "$(grep -A12 '^kind: PodDisruptionBudget' "$r" | grep -c 'maxUnavailable: 1')" 1
    expect_eq "etcd NetworkPolicy: client, peer and metrics ports" \
        "$(sed -n '/^kind: NetworkPolicy/,/^---/p' "$r" | grep -oE 'port: 23[78][0-9]' | sort | paste -sd' ')" \
        "port: 2379 port: 2380 port: 2381"
    # The dry run wrote nothing.
    expect_eq "deployments after the dry run" "$(kc get deploy -n "$ns" -o name | wc -l)" 0
    ;;
install)
    ns=$(unique helm-install) release=$(unique r)
    full=$release-operator
    trap 'hm uninstall "$release" -n "$ns" >/dev/null 2>&1 || true
          kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
    hm install "$release" "$chart" -n "$ns" --create-namespace --set replicas=1 \
        --set image.tag=e2e --timeout 120s
    expect_eq "release status" "$(hm status "$release" -n "$ns" -o json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["info"]["status"])')" deployed
    for crd in clusters.spool.dev topics.spool.dev users.spool.dev; do
        expect_eq "CRD $crd established" \
            "$(kc get crd "$crd" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" True
    done
    expect_eq "deployment image" \
        "$(kc get deploy "$full" -n "$ns" -o jsonpath='{.spec.template.spec.containers[0].image}')" \
        "ghcr.io/spool-dev/spool-operator:e2e"
    expect_eq "deployment replicas" \
        "$(kc get deploy "$full" -n "$ns" -o jsonpath='{.spec.replicas}')" 1
    expect_eq "deployment service account" \
        "$(kc get deploy "$full" -n "$ns" -o jsonpath='{.spec.template.spec.serviceAccountName}')" "$full"
    kc get serviceaccount "$full" -n "$ns" >/dev/null
    kc get service "$full-metrics" -n "$ns" >/dev/null
    kc get clusterrole "$full" >/dev/null
    kc get clusterrolebinding "$full" >/dev/null
    kc get role "$full-leader-election" -n "$ns" >/dev/null
    # The etcd CA is made once: an upgrade (re-render) keeps it and re-signs the server
    # certificate with it.
    etcd_ca() { kc get secret "$release-etcd-tls" -n "$ns" -o jsonpath='{.data.ca\.crt}' | sha256sum | cut -c1-16; }
    ca_before=$(etcd_ca)
    kc get secret "$release-etcd-tls" -n "$ns" -o jsonpath='{.data.ca\.key}' | grep -q . ||
        fail "no etcd CA (ca.key) in Secret $release-etcd-tls"
    hm upgrade "$release" "$chart" -n "$ns" --reuse-values --timeout 120s >/dev/null
    expect_eq "etcd CA unchanged by helm upgrade" "$(etcd_ca)" "$ca_before"
    expect_eq "serviceaccount may get the etcd CA Secret" \
        "$(kc auth can-i get "secrets/$release-etcd-tls" -n "$ns" --as "system:serviceaccount:$ns:$full" || true)" yes
    echo "ok: ServiceAccount, Service, ClusterRole(+Binding), leader-election Role exist"
    # The RBAC grants what the reconcilers do, checked by the API server's own authorizer.
    sa=system:serviceaccount:$ns:$full
    for check in "patch statefulsets.apps" "delete pods" "create events" "update clusters.spool.dev/status" \
                 "update topics.spool.dev/finalizers" "patch poddisruptionbudgets.policy" \
                 "watch topics.spool.dev" "create leases.coordination.k8s.io" \
                 "update users.spool.dev/status" "update users.spool.dev/finalizers" \
                 "watch users.spool.dev" "patch secrets" "watch secrets"; do
        # shellcheck disable=SC2086
        expect_eq "serviceaccount may $check" "$(kc auth can-i $check -n "$ns" --as "$sa" || true)" yes
    done
    expect_eq "serviceaccount may not delete secrets" \
        "$(kc auth can-i delete secrets -n "$ns" --as "$sa" || true)" no
    hm uninstall "$release" -n "$ns" --timeout 120s
    for gone in "deploy/$full -n $ns" "serviceaccount/$full -n $ns" "clusterrole/$full" \
                "clusterrolebinding/$full"; do
        # shellcheck disable=SC2086
        if kc get $gone >/dev/null 2>&1; then fail "$gone still exists after helm uninstall"; fi
    done
    echo "ok: helm uninstall removed the release's objects"
    expect_eq "CRDs kept after uninstall (helm never deletes crds/)" \
        "$(kc get crd clusters.spool.dev -o name)" customresourcedefinition.apiextensions.k8s.io/clusters.spool.dev
    ;;
*) echo "usage: helm_test.sh lint|template|install SRC [CONTROL_PLANE_DIR]" >&2; exit 2 ;;
esac
echo "helm $mode: passed"
