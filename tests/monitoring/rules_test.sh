#!/usr/bin/env bash
# CTest monitoring_rules (label monitoring): the alert rules parse (promtool check rules), behave
# as their unit tests say (promtool test rules), and every alert is complete and covered
# (check_rules.py), and the dashboards JSON is what generate.py writes. promtool is Debian's
# prometheus package (scripts/setup.sh --with-tests).
#
# usage: rules_test.sh <source dir>
set -euo pipefail
src=$1
command -v promtool >/dev/null || { echo "FAIL: promtool missing (apt-get install prometheus; scripts/setup.sh --with-tests)"; exit 1; }
promtool check rules "$src/charts/spool/rules/spool.rules.yaml"
(cd "$src/tests/monitoring" && promtool test rules rules_test.yaml)
/usr/bin/python3 "$src/tests/monitoring/check_rules.py" "$src"
# The dashboards are generated; the committed JSON must be what the generator writes.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$src/charts/spool/dashboards/generate.py" "$tmp"
diff -r -x generate.py "$src/charts/spool/dashboards" "$tmp" || { echo "FAIL: charts/spool/dashboards/*.json differ from generate.py's output (run it)"; exit 1; }
echo "ok: dashboards JSON = generate.py output"
