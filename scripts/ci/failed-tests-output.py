#!/usr/bin/env python3
"""Prints the last lines of each failed test's output from a CTest JUnit file.

CI keeps only the tail of a run's output, where CTest lists the failed tests' names but not why
they failed; scripts/test.sh calls this after a failing ctest so that the reason is in that tail.
Usage: failed-tests-output.py JUNIT_XML [LINES]
"""
import sys
import xml.etree.ElementTree as ElementTree


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    try:
        root = ElementTree.parse(sys.argv[1]).getroot()
    except (OSError, ElementTree.ParseError) as error:
        print(f"no CTest JUnit output to read ({error})", file=sys.stderr)
        return 1
    for case in root.iter("testcase"):
        if case.get("status") not in ("fail", "failed") and case.find("failure") is None:
            continue
        output = case.findtext("system-out") or ""
        tail = output.rstrip("\n").splitlines()[-lines:]
        print(f"===== {case.get('name')}: last {len(tail)} lines of its output =====")
        print("\n".join(tail))
    return 0


if __name__ == "__main__":
    sys.exit(main())
