#!/usr/bin/env bash
# The chart's monitoring objects (ServiceMonitor, PodMonitor, PrometheusRule, dashboards):
#   helm_monitoring_test.sh render SRC          helm template with and without the
#       monitoring.coreos.com API, with force, disabled; helm_monitoring_check.py checks what
#       renders when, that the PrometheusRule is the plain rules file, the dashboards are the
#       JSON files, and the broker monitors select what the operator's builders label
#   helm_monitoring_test.sh apply SRC CP_DIR    the Prometheus Operator CRDs
#       (scripts/peers/fetch-prometheus-operator-crds.sh, Go module proxy) installed in the real
#       kube-apiserver of the e2e fixture, then every rendered monitoring object applied
#       server-side (the API server validates them against the CRDs' schemas) and read back
set -euo pipefail
mode=$1 src=$2 cp_dir=${3:-}
helm="$("$src/scripts/peers/fetch-helm.sh")/bin/helm"
chart=$src/charts/spool
export HELM_CONFIG_HOME HELM_CACHE_HOME HELM_DATA_HOME
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
HELM_CONFIG_HOME=$tmp/config HELM_CACHE_HOME=$tmp/cache HELM_DATA_HOME=$tmp/data
fail() { echo "FAIL: $*" >&2; exit 1; }
# Whatever step fails under set -e says which one and how, before the EXIT trap removes $tmp.
trap 'rc=$?; echo "FAIL: helm_monitoring_test.sh $mode: line $LINENO: $BASH_COMMAND (exit $rc)" >&2' ERR
on="--set monitoring.serviceMonitor.enabled=true --set monitoring.podMonitor.enabled=true
    --set monitoring.prometheusRule.enabled=true --set monitoring.dashboards.enabled=true"
force="--set monitoring.serviceMonitor.force=true --set monitoring.podMonitor.force=true
       --set monitoring.prometheusRule.force=true"
apis="--api-versions monitoring.coreos.com/v1/ServiceMonitor
      --api-versions monitoring.coreos.com/v1/PodMonitor
      --api-versions monitoring.coreos.com/v1/PrometheusRule"
render() {  # render OUT ARGS...
    local out=$1; shift
    # shellcheck disable=SC2068
    "$helm" template r "$chart" --kube-version "${kube_version:-v1.33.0}" $@ >"$tmp/$out"
}

case $mode in
render)
    "$helm" lint --strict "$chart" $on $force
    render off.yaml $on
    render api.yaml $on $apis
    render forced.yaml $on $force
    render disabled.yaml $apis
    /usr/bin/python3 "$src/tests/e2e/helm_monitoring_check.py" "$src" "$tmp"
    ;;
apply)
    # kubectl at the control plane's version (scripts/k8s/build.sh), set by CTest.
    kubectl=${SPOOL_KUBECTL:?SPOOL_KUBECTL: the kubectl of scripts/k8s/build.sh}
    [[ -x "$kubectl" ]] || { echo "missing $kubectl: run scripts/k8s/build.sh" >&2; exit 1; }
    kc() { "$kubectl" --kubeconfig "$cp_dir/kubeconfig" "$@"; }
    # The API server may still be coming back from the test before (resilience_test restarts it).
    for _ in $(seq 1 60); do
        kc get --raw /readyz >/dev/null 2>"$tmp/readyz.err" && break
        sleep 0.5
    done
    kc get --raw /readyz >/dev/null 2>>"$tmp/readyz.err" ||
        fail "the API server is not ready after 30 s: $(tail -3 "$tmp/readyz.err")"
    crds=$("$src/scripts/peers/fetch-prometheus-operator-crds.sh")
    kc apply --server-side --field-manager helm-monitoring-e2e -f "$crds" >/dev/null
    kc wait --for condition=Established --timeout 60s \
        crd/servicemonitors.monitoring.coreos.com crd/podmonitors.monitoring.coreos.com \
        crd/prometheusrules.monitoring.coreos.com
    kube_version=$(kc get --raw /version | python3 -c 'import json,sys
v = json.load(sys.stdin); print("v%s.%s.0" % (v["major"], v["minor"].rstrip("+")))')
    ns=helm-monitoring-$$-$RANDOM
    kc create namespace "$ns" >/dev/null
    trap 'kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
    # What helm itself would render here: the API exists now, no force needed.
    render all.yaml $on $apis --namespace "$ns" \
        --show-only templates/servicemonitor.yaml --show-only templates/podmonitor.yaml \
        --show-only templates/prometheusrule.yaml --show-only templates/dashboards.yaml
    want=$(grep -c '^kind:' "$tmp/all.yaml")
    ((want >= 11)) || fail "only $want monitoring objects rendered"
    # Established does not mean every API server cache serves the new kinds yet: kubectl can
    # still answer "no matches for kind ... ensure CRDs are installed first" for a moment.
    for attempt in $(seq 1 20); do
        if kc apply --server-side --field-manager helm-monitoring-e2e -n "$ns" \
            -f "$tmp/all.yaml" >"$tmp/applied.txt" 2>&1; then
            break
        fi
        grep -q 'no matches for kind\|ensure CRDs are installed first' "$tmp/applied.txt" ||
            fail "kubectl apply failed: $(cat "$tmp/applied.txt")"
        ((attempt < 20)) || fail "the monitoring kinds were never served: $(cat "$tmp/applied.txt")"
        sleep 0.5
    done
    applied=$(grep -c 'serverside-applied' "$tmp/applied.txt" || true)
    [[ "$applied" == "$want" ]] || fail "$applied of $want objects applied: $(cat "$tmp/applied.txt")"
    echo "ok: $applied monitoring objects applied server-side"
    for kind in servicemonitors podmonitors prometheusrules; do
        n=$(kc get "$kind.monitoring.coreos.com" -n "$ns" -o name | wc -l)
        ((n >= 1)) || fail "no $kind in $ns after apply"
        echo "ok: $n $kind stored"
    done
    rules=$(kc get prometheusrules.monitoring.coreos.com -n "$ns" -o json |
        python3 -c 'import json,sys; print(sum(len(g["rules"]) for g in json.load(sys.stdin)["items"][0]["spec"]["groups"]))')
    [[ "$rules" -ge 16 ]] || fail "the stored PrometheusRule has $rules rules"
    echo "ok: the stored PrometheusRule has $rules rules"
    ;;
*) echo "usage: helm_monitoring_test.sh render SRC | apply SRC CONTROL_PLANE_DIR" >&2; exit 2 ;;
esac
echo "helm monitoring $mode: passed"
