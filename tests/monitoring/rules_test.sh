#!/usr/bin/env bash
# CTest monitoring_rules (label monitoring): the alert rules parse (promtool check rules), behave
# as their unit tests say (promtool test rules), and every alert is complete and covered
# (check_rules.py). promtool is Debian's prometheus package (scripts/setup.sh --with-tests).
#
# usage: rules_test.sh <source dir>
set -euo pipefail
src=$1
command -v promtool >/dev/null || { echo "FAIL: promtool missing (apt-get install prometheus; scripts/setup.sh --with-tests)"; exit 1; }
promtool check rules "$src/charts/spool/rules/spool.rules.yaml"
(cd "$src/tests/monitoring" && promtool test rules rules_test.yaml)
python3 "$src/tests/monitoring/check_rules.py" "$src"
