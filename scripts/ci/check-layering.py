#!/usr/bin/env python3
"""Fails on an #include "..." that crosses Spool's intended layering (docs/architecture.md).

Every #include "..." of the C++ sources under common/, protocol/, broker/ and operator/ is
checked against these rules, lowest layer first:

  top level   common < protocol < broker; operator uses common, protocol and broker/config
              (the broker's configuration keys) only. Test support (tests/..., test_util.h) is
              for test code only (files under a tests/, bench/ or fuzz/ folder).
  modules     broker/<module> may include only the modules before it in the order of
              broker/CMakeLists.txt's module list; the same for protocol/ (protocol/CMakeLists.txt)
              and operator/ (operator/CMakeLists.txt). Test code of a module may include the
              modules before it and its own, like its sources.
  metadata    broker/metadata's sources (not its tests) are in sub-layers, lowest first: the
              tables at its top (cluster_state.h, store.h, records, ...), controller/plan/ (the
              pure planners), embedded/, etcd/, controller/ (the etcd-driven controller). A file
              may include only its own sub-layer and those below it. controller/plan/ includes
              nothing of etcd (broker/etcd/, broker/metadata/etcd/).
  door        the Kafka handlers (broker/handlers, not their tests) reach a partition only
              through its door (replication::partition: replicate, read and the admin methods,
              which own leadership, epoch fencing and read bounds): no partition's log()
              (`.log()`, `->log()`), no storage::partition_log, no partition_manager::local().
              Checked on the code with // comments removed.

Comments and string literals are not parsed beyond the #include line itself; a commented-out
include (// #include) is not an include. Prints one line per violation, "file:line: rule", and
exits 1 if there is any; 0 otherwise.

Usage: check-layering.py [source root] (default: the repository this script is in).
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# The folders whose files are test support rather than the module's own sources.
TEST_DIRS = {"tests", "bench", "fuzz"}
ROOTS = ("common", "protocol", "broker", "operator")
# What each top-level folder may include besides itself.
TOP_ALLOWED = {
    "common": set(),
    "protocol": {"common"},
    "broker": {"common", "protocol"},
    "operator": {"common", "protocol", "broker/config"},
}
# broker/metadata's sub-layers, lowest first ("" = the files at its top).
METADATA_LAYERS = ["", "controller/plan", "embedded", "etcd", "controller"]
# Folders no file of a sub-layer may include, whatever the order says.
METADATA_FORBIDDEN = {
    "controller/plan": ("broker/etcd/", "broker/metadata/etcd/"),
}


def module_order(root, folder):
    """The module list of <folder>/CMakeLists.txt's `foreach(... IN ITEMS ...)`."""
    path = os.path.join(root, folder, "CMakeLists.txt")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"foreach\(\s*\w+\s+IN\s+ITEMS\s+([^)]*)\)", text)
    if not m:
        raise SystemExit(f"{path}: no 'foreach(... IN ITEMS ...)' module list")
    return m.group(1).split()


def is_test_code(parts):
    return any(p in TEST_DIRS for p in parts[:-1])


def metadata_layer(rel):
    """The sub-layer of a path under broker/metadata/ (the longest matching folder)."""
    sub = rel[len("broker/metadata/"):]
    best = ""
    for layer in METADATA_LAYERS:
        if layer and (sub.startswith(layer + "/")) and len(layer) > len(best):
            best = layer
    return best


DOOR_DIRS = ("broker/handlers/",)
DOOR_BYPASS = re.compile(r"(?:\.|->)log\(\)|\bpartition_log\b|(?:\.|->)local\(")


def check_door(rel, lines):
    """Yields (line number, message) for a handler line that goes past a partition's door."""
    if not rel.startswith(DOOR_DIRS) or is_test_code(rel.split("/")):
        return
    for number, line in enumerate(lines, start=1):
        code = line.split("//", 1)[0]
        m = DOOR_BYPASS.search(code)
        if m:
            yield number, (f"'{m.group(0)}': handlers reach a partition through its door "
                           f"(replication::partition), not its log (partition door)")


def check_file(rel, lines, orders):
    """Yields (line number, message) for every include of `rel` that breaks a rule."""
    parts = rel.split("/")
    top = parts[0]
    test_code = is_test_code(parts)
    for number, line in enumerate(lines, start=1):
        m = INCLUDE.match(line)
        if not m:
            continue
        inc = m.group(1)
        iparts = inc.split("/")
        itop = iparts[0]
        if len(iparts) == 1 or itop == "tests":
            # A file next to the includer ("foo.h"), generated, or test support.
            if itop == "tests" or inc == "test_util.h":
                if not test_code:
                    yield number, f"test support '{inc}' included by non-test code"
            continue
        if itop not in ROOTS:
            continue  # generated headers and the like: not part of the layering
        if itop != top:
            allowed = TOP_ALLOWED.get(top, set())
            if itop not in allowed and "/".join(iparts[:2]) not in allowed:
                yield number, (f"'{inc}': {top}/ may include only "
                               f"{', '.join(sorted(allowed)) or 'itself'} (top-level layering)")
            continue
        order = orders.get(top)
        if order and len(parts) > 2 and len(iparts) > 2:
            mod, imod = parts[1], iparts[1]
            if mod in order and imod in order and order.index(imod) > order.index(mod):
                yield number, (f"'{inc}': {top}/{mod} may not include {top}/{imod}, which comes "
                               f"after it in {top}/CMakeLists.txt's module order")
                continue
        if (top == "broker" and len(parts) > 2 and parts[1] == "metadata" and not test_code
                and inc.startswith("broker/")):
            layer = metadata_layer(rel)
            for forbidden in METADATA_FORBIDDEN.get(layer, ()):
                if inc.startswith(forbidden):
                    yield number, (f"'{inc}': metadata/{layer}/ is pure and may not include "
                                   f"{forbidden} (metadata sub-layers)")
                    break
            else:
                if inc.startswith("broker/metadata/"):
                    ilayer = metadata_layer(inc)
                    if METADATA_LAYERS.index(ilayer) > METADATA_LAYERS.index(layer):
                        yield number, (
                            f"'{inc}': metadata/{layer or '(top)'} may not include "
                            f"metadata/{ilayer}, a sub-layer above it "
                            f"(order: {' < '.join(l or '(top)' for l in METADATA_LAYERS)})")


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    orders = {folder: module_order(root, folder) for folder in ("broker", "protocol", "operator")}
    violations = 0
    checked = 0
    for top in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith((".h", ".hh", ".hpp", ".cc", ".cpp", ".inl")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
                checked += 1
                for number, message in [*check_file(rel, lines, orders),
                                        *check_door(rel, lines)]:
                    print(f"{rel}:{number}: {message}")
                    violations += 1
    if violations:
        print(f"layering_check: {violations} include(s) cross the layering "
              f"({checked} files checked; docs/architecture.md)", file=sys.stderr)
        return 1
    print(f"layering_check: {checked} files, every include within the layering")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
