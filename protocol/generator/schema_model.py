"""Schema model for gen.py: parses protocol/schema/*.schema into messages, fields and structs,
and answers version questions (which versions a field is present, tagged, nullable, flexible in).
"""

import re

# ---------------------------------------------------------------------------------------------
# Schema model


class VersionRange:
    """A Kafka version range: "3+", "0-12", "7" or "none"."""

    def __init__(self, text):
        self.text = text
        if text == "none":
            self.lo, self.hi = None, None
        elif text.endswith("+"):
            self.lo, self.hi = int(text[:-1]), 32767
        elif "-" in text:
            a, b = text.split("-")
            self.lo, self.hi = int(a), int(b)
        else:
            self.lo = self.hi = int(text)

    def contains(self, v):
        return self.lo is not None and self.lo <= v <= self.hi


class Field:
    def __init__(self, tokens, line_no):
        self.name, self.type = tokens[0], tokens[1]
        attrs = dict(t.split("=", 1) for t in tokens[2:])
        self.versions = VersionRange(attrs.pop("v"))
        self.nullable = VersionRange(attrs.pop("nullable", "none"))
        tag = attrs.pop("tag", None)
        self.tag = int(tag) if tag is not None else None
        self.tagged = VersionRange(attrs.pop("tagged", "none"))
        flex = attrs.pop("flexible", None)
        self.flexible = VersionRange(flex) if flex is not None else None
        self.default = attrs.pop("default", None)
        if attrs:
            raise SystemExit("line %d: unknown attributes %s" % (line_no, attrs))
        self.children = []
        self.struct = None  # a Struct when the field's type names a struct

    @property
    def is_array(self):
        return self.type.startswith("[]")

    @property
    def elem_type(self):
        return self.type[2:] if self.is_array else self.type

    @property
    def has_struct(self):
        return self.elem_type[0].isupper()

    def ever_nullable(self):
        return self.nullable.lo is not None


class Struct:
    def __init__(self, name, fields, parent):
        self.name = name
        self.fields = fields
        self.parent = parent
        self.nested = []  # Structs declared inside this one, in declaration order
        self.cpp_name = snake(name)

    def qualified(self):
        parts = []
        s = self
        while s is not None:
            parts.append(s.cpp_name)
            s = s.parent
        return "::".join(reversed(parts))


class Message(Struct):
    def __init__(self, kind, name, attrs, fields, commons):
        super().__init__(name, fields, None)
        self.kind = kind
        self.key = int(attrs["key"]) if "key" in attrs else None
        self.versions = VersionRange(attrs["versions"])
        self.flexible = VersionRange(attrs["flexible"])
        self.commons = commons


KEYWORDS = {"default", "delete", "new", "class", "operator", "private", "public", "protected",
            "register", "template", "this", "throw", "try", "union", "virtual", "int", "long",
            "short", "char", "bool", "auto", "const", "switch", "case", "for", "while", "do"}
RESERVED_MEMBERS = {"decode", "encode", "encoded_size", "randomize", "unknown_tags",
                    "min_encoded_size", "api", "version"}


def snake(name):
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def member_name(name):
    s = snake(name)
    if s in KEYWORDS or s in RESERVED_MEMBERS:
        s += "_"
    return s


def parse_schema(path):
    """Parses one schema file into Messages. Indentation (two spaces) gives nesting."""
    messages = []
    stack = []  # (depth, Field or marker)
    current = None
    for no, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        tokens = line.split()
        if depth == 0:
            kind, name = tokens[0], tokens[1]
            attrs = dict(t.split("=", 1) for t in tokens[2:])
            current = {"kind": kind, "name": name, "attrs": attrs, "fields": [], "commons": []}
            messages.append(current)
            stack = []
            continue
        stack = [s for s in stack if s[0] < depth]
        if tokens[0] == "struct" and depth == 1:
            entry = {"name": tokens[1], "fields": []}
            current["commons"].append(entry)
            stack.append((depth, entry["fields"]))
            continue
        f = Field(tokens, no)
        target = stack[-1][1] if stack else current["fields"]
        target.append(f)
        stack.append((depth, f.children))
    out = []
    for m in messages:
        msg = Message(m["kind"], m["name"], m["attrs"], m["fields"], m["commons"])
        msg._common_order = []
        resolve_structs(msg, msg, {c["name"]: c["fields"] for c in m["commons"]})
        msg.nested = msg._common_order + msg.nested
        out.append(msg)
    return out


def all_fields(fields, commons):
    """Every field of a message: its own, nested ones and those of its common structs."""
    out = []
    stack = list(fields) + [f for c in commons.values() for f in c]
    while stack:
        f = stack.pop()
        out.append(f)
        stack.extend(f.children)
    return out


def resolve_structs(msg, owner, commons):
    """Creates Struct objects for fields whose type names a struct, nesting them like Kafka does.
    Common structs are declared once at message level."""
    common_done = getattr(msg, "_common_structs", None)
    if common_done is None:
        common_done = msg._common_structs = {}
    taken = {member_name(f.name) for f in owner.fields} | {owner.cpp_name}
    for f in owner.fields:
        if not f.has_struct:
            continue
        tname = f.elem_type
        if f.children:
            st = Struct(tname, f.children, owner)
            if st.cpp_name in taken:
                st.cpp_name += "_type"
            owner.nested.append(st)
            resolve_structs(msg, st, commons)
        elif tname in commons:
            st = common_done.get(tname)
            if st is None:
                st = Struct(tname, commons[tname], msg)
                # A common struct is visible in every nested struct: a field of the same name
                # anywhere in the message would hide it (ConsumerGroupHeartbeat's
                # Assignment.TopicPartitions).
                names = {member_name(x.name) for x in all_fields(msg.fields, commons)}
                if st.cpp_name in names | {msg.cpp_name}:
                    st.cpp_name += "_type"
                common_done[tname] = st
                resolve_structs(msg, st, commons)
                # Post-order: common structs used by this one are declared before it.
                msg._common_order.append(st)
        else:
            raise SystemExit("%s: unknown struct type %s" % (msg.name, tname))
        f.struct = st


# ---------------------------------------------------------------------------------------------
# Version conditions


class Ctx:
    """Version facts of the message being generated."""

    def __init__(self, msg):
        self.lo, self.hi = msg.versions.lo, msg.versions.hi
        self.flex = msg.flexible

    def all(self):
        return set(range(self.lo, self.hi + 1))

    def vset(self, vr):
        return {v for v in self.all() if vr.contains(v)}

    def cond(self, versions):
        """C++ boolean expression for `version in versions`; None if always, "false" if never."""
        versions = set(versions)
        if versions == self.all():
            return None
        if not versions:
            return "false"
        vs = sorted(versions)
        ranges = []
        start = prev = vs[0]
        for v in vs[1:]:
            if v != prev + 1:
                ranges.append((start, prev))
                start = v
            prev = v
        ranges.append((start, prev))
        parts = []
        for a, b in ranges:
            if a == self.lo and b == self.hi:
                return None
            if a == self.lo:
                parts.append("version <= %d" % b)
            elif b == self.hi:
                parts.append("version >= %d" % a)
            elif a == b:
                parts.append("version == %d" % a)
            else:
                parts.append("(version >= %d && version <= %d)" % (a, b))
        return " || ".join(parts)

    def flex_set(self):
        return self.vset(self.flex)

    def regular_set(self, f):
        return {v for v in self.vset(f.versions) if not f.tagged.contains(v)}

    def tagged_set(self, f):
        return {v for v in self.vset(f.versions) if f.tagged.contains(v)}

    def nullable_expr(self, f):
        c = self.cond(self.vset(f.nullable))
        return "true" if c is None else "(%s)" % c

    def field_flex(self, f):
        """Expression for whether the field uses the compact encoding."""
        if (f.flexible is not None and f.flexible.lo is None) or not self.flex_set():
            return "false"
        return "flex"


def guard(cond):
    return "(%s)" % cond if cond and "||" in cond else cond
