"""C++ emitters for gen.py: struct declarations and the decode/encode/encoded_size/randomize
definitions of one message and its nested structs."""

from schema_model import guard, member_name, snake

# ---------------------------------------------------------------------------------------------
# C++ types

SCALARS = {
    # type: (cpp type, read call, write call, size)
    "bool": ("bool", "r.read_bool()", "w.write_bool", 1),
    "int8": ("int8_t", "r.read_i8()", "w.write_i8", 1),
    "int16": ("int16_t", "r.read_i16()", "w.write_i16", 2),
    "uint16": ("uint16_t", "r.read_u16()", "w.write_u16", 2),
    "int32": ("int32_t", "r.read_i32()", "w.write_i32", 4),
    "uint32": ("uint32_t", "r.read_u32()", "w.write_u32", 4),
    "int64": ("int64_t", "r.read_i64()", "w.write_i64", 8),
    "float64": ("double", "r.read_f64()", "w.write_f64", 8),
    "uuid": ("uuid", "wire::read_uuid(r)", "wire::write_uuid", 16),
}


def elem_cpp(f):
    t = f.elem_type
    if f.has_struct:
        return f.struct.cpp_name
    if t in SCALARS:
        return SCALARS[t][0]
    return {"string": "std::string", "bytes": "std::vector<uint8_t>",
            "records": "records_field"}[t]


def field_cpp(f):
    base = elem_cpp(f)
    if f.is_array:
        base = "std::vector<%s>" % base
    if f.ever_nullable() and f.type != "records":
        base = "std::optional<%s>" % base
    return base


def int_literal(t, d):
    v = int(d, 0)
    if t == "int32" and v == -2147483648:
        return "INT32_MIN"
    if t == "int64":
        return "INT64_C(%d)" % v
    return str(v)


def field_default(f):
    """Initializer text (including '= ' or '{...}') or '' for value-initialised members."""
    t = f.type
    if f.ever_nullable() and t != "records":
        return "" if f.default == "null" else "{std::in_place}"
    if f.is_array or t in ("string", "bytes", "records", "uuid") or f.has_struct:
        return ""
    if t == "bool":
        return " = %s" % ("true" if f.default == "true" else "false")
    if t == "float64":
        return " = %s" % (f.default or "0.0")
    return " = %s" % (int_literal(t, f.default) if f.default else "0")


def is_default_expr(f, name):
    t = f.type
    if f.ever_nullable() and t != "records":
        if f.default == "null":
            return "!%s.has_value()" % name
        return "(%s.has_value() && %s->empty())" % (name, name)
    if f.is_array or t in ("string", "bytes", "records"):
        return "%s.empty()" % name
    if f.has_struct:
        return "%s == %s{}" % (name, f.struct.cpp_name)
    if t == "uuid":
        return "%s == uuid{}" % name
    d = field_default(f)[3:]
    return "%s == %s" % (name, d)


def min_size_expr(ctx, s):
    """C++ expression for the least number of bytes an instance of s can take at `version`."""
    terms = []
    for f in s.fields:
        c = ctx.cond(ctx.regular_set(f))
        if c == "false":
            continue
        ff = ctx.field_flex(f)
        if f.is_array or f.type in ("bytes", "records"):
            sz = "(%s ? 1 : 4)" % ff if ff != "false" else "4"
        elif f.type == "string":
            sz = "(%s ? 1 : 2)" % ff if ff != "false" else "2"
        elif f.has_struct and f.ever_nullable():
            sz = "1"  # Kafka's nullable struct: an int8 marker, -1 for null
        elif f.has_struct:
            sz = "%s::min_encoded_size(version)" % f.struct.cpp_name
        else:
            sz = str(SCALARS[f.type][3])
        terms.append(sz if c is None else "(%s ? %s : 0)" % (c, sz))
    if ctx.flex_set():
        terms.append("(flex ? 1 : 0)")
    return " + ".join(terms) if terms else "0"


# ---------------------------------------------------------------------------------------------
# Code emitters (each returns a list of C++ lines without trailing indentation)


def decode_value(ctx, f, target, ff, nullable, rd="r"):
    """Lines decoding one value of field f (not tagged-section framing) into target."""
    t = f.elem_type
    lines = []
    if f.is_array:
        cpp = elem_cpp(f)
        lines.append("{")
        lines.append("    const int32_t n = wire::read_array_length(%s, %s);" % (rd, ff))
        if f.ever_nullable():
            lines.append("    if (n < 0) {")
            lines.append("        if (!%s) {" % nullable)
            lines.append("            %s.fail(wire::read_error::unexpected_null);" % rd)
            lines.append("            return false;")
            lines.append("        }")
            lines.append("        %s.reset();" % target)
            lines.append("    } else {")
            vec = "%s.emplace()" % target
        else:
            lines.append("    if (n < 0) {")
            lines.append("        %s.fail(wire::read_error::unexpected_null);" % rd)
            lines.append("        return false;")
            lines.append("    } else {")
            vec = target
        if f.has_struct:
            mins = "%s::min_encoded_size(version)" % f.struct.cpp_name
        elif t in SCALARS:
            mins = str(SCALARS[t][3])
        elif t == "string":
            mins = "(%s ? 1 : 2)" % ff if ff != "false" else "2"
        else:
            mins = "(%s ? 1 : 4)" % ff if ff != "false" else "4"
        lines.append("        if (!%s.can_hold(static_cast<uint32_t>(n), %s) ||" % (rd, mins))
        lines.append("            !%s.charge(static_cast<uint32_t>(n), sizeof(%s))) {" % (rd, cpp))
        lines.append("            return false;")
        lines.append("        }")
        lines.append("        auto& vec = %s;" % vec)
        lines.append("        vec.clear();")
        lines.append("        vec.reserve(wire::bounded_reserve<%s>(n, %s.remaining()));" % (cpp, rd))
        lines.append("        for (int32_t i = 0; i < n; ++i) {")
        if f.has_struct:
            lines.append("            if (!vec.emplace_back().decode(%s, version)) {" % rd)
            lines.append("                return false;")
            lines.append("            }")
        elif t in SCALARS:
            lines.append("            vec.push_back(%s);" % SCALARS[t][1].replace("r.", rd + ".").replace("(r)", "(%s)" % rd))
        elif t == "string":
            lines.append("            if (!wire::read_string(%s, %s, vec.emplace_back())) {" % (rd, ff))
            lines.append("                return false;")
            lines.append("            }")
        else:
            raise SystemExit("unsupported array element %s" % t)
        lines.append("        }")
        lines.append("    }")
        lines.append("}")
        return lines
    if f.has_struct and f.ever_nullable():
        # Kafka's nullable struct: int8 -1 (null) or 1, then the struct.
        return ["if (%s.read_i8() < 0) {" % rd,
                "    if (!%s) {" % nullable,
                "        %s.fail(wire::read_error::unexpected_null);" % rd,
                "        return false;",
                "    }",
                "    %s.reset();" % target,
                "} else if (!%s.emplace().decode(%s, version)) {" % (target, rd),
                "    return false;", "}"]
    if f.has_struct:
        return ["if (!%s.decode(%s, version)) {" % (target, rd), "    return false;", "}"]
    if t in SCALARS:
        rdx = SCALARS[t][1].replace("r.", rd + ".").replace("(r)", "(%s)" % rd)
        return ["%s = %s;" % (target, rdx)]
    if t == "records":
        return ["if (!%s.decode(%s, %s, %s)) {" % (target, rd, ff, nullable if f.ever_nullable() else "false"),
                "    return false;", "}"]
    fn = {"string": "string", "bytes": "bytes"}[t]
    if f.ever_nullable():
        call = "wire::read_nullable_%s(%s, %s, %s, %s)" % (fn, rd, ff, nullable, target)
    else:
        call = "wire::read_%s(%s, %s, %s)" % (fn, rd, ff, target)
    return ["if (!%s) {" % call, "    return false;", "}"]


def encode_value(ctx, f, src, ff, nullable):
    t = f.elem_type
    if f.is_array:
        lines = []
        if f.ever_nullable():
            lines.append("if (!%s.has_value() && %s) {" % (src, nullable))
            lines.append("    wire::write_array_length(w, %s, -1);" % ff)
            lines.append("} else {")
            lines.append("    const auto& vec = %s ? *%s : wire::empty_vector<%s>();" % (src, src, elem_cpp(f)))
        else:
            lines.append("{")
            lines.append("    const auto& vec = %s;" % src)
        lines.append("    wire::write_array_length(w, %s, static_cast<int32_t>(vec.size()));" % ff)
        lines.append("    for (const auto& e : vec) {")
        if f.has_struct:
            lines.append("        e.encode(w, version);")
        elif t in SCALARS:
            lines.append("        %s(%se);" % (SCALARS[t][2], "w, " if t == "uuid" else ""))
        else:
            lines.append("        wire::write_string(w, %s, e);" % ff)
        lines.append("    }")
        lines.append("}")
        return lines
    if f.has_struct and f.ever_nullable():
        return ["if (!%s) {" % src, "    w.write_i8(-1);", "} else {", "    w.write_i8(1);",
                "    %s->encode(w, version);" % src, "}"]
    if f.has_struct:
        return ["%s.encode(w, version);" % src]
    if t in SCALARS:
        return ["%s(%s%s);" % (SCALARS[t][2], "w, " if t == "uuid" else "", src)]
    if t == "records":
        return ["%s.encode(w, %s, %s);" % (src, ff, nullable if f.ever_nullable() else "false")]
    fn = {"string": "string", "bytes": "bytes"}[t]
    if f.ever_nullable():
        return ["wire::write_nullable_%s(w, %s, %s, %s);" % (fn, ff, nullable, src)]
    return ["wire::write_%s(w, %s, %s);" % (fn, ff, src)]


def size_value(ctx, f, src, ff, nullable, acc):
    t = f.elem_type
    if f.is_array:
        lines = []
        if f.ever_nullable():
            lines.append("if (!%s.has_value() && %s) {" % (src, nullable))
            lines.append("    %s += wire::array_length_size(%s, -1);" % (acc, ff))
            lines.append("} else {")
            lines.append("    const auto& vec = %s ? *%s : wire::empty_vector<%s>();" % (src, src, elem_cpp(f)))
        else:
            lines.append("{")
            lines.append("    const auto& vec = %s;" % src)
        lines.append("    %s += wire::array_length_size(%s, static_cast<int32_t>(vec.size()));" % (acc, ff))
        if f.has_struct:
            lines.append("    for (const auto& e : vec) {")
            lines.append("        %s += e.encoded_size(version);" % acc)
            lines.append("    }")
        elif t in SCALARS:
            lines.append("    %s += vec.size() * %d;" % (acc, SCALARS[t][3]))
        else:
            lines.append("    for (const auto& e : vec) {")
            lines.append("        %s += wire::string_size(%s, e);" % (acc, ff))
            lines.append("    }")
        lines.append("}")
        return lines
    if f.has_struct and f.ever_nullable():
        return ["%s += 1 + (%s ? %s->encoded_size(version) : 0);" % (acc, src, src)]
    if f.has_struct:
        return ["%s += %s.encoded_size(version);" % (acc, src)]
    if t in SCALARS:
        return ["%s += %d;" % (acc, SCALARS[t][3])]
    if t == "records":
        return ["%s += %s.encoded_size(%s, %s);" % (acc, src, ff, nullable if f.ever_nullable() else "false")]
    fn = {"string": "string", "bytes": "bytes"}[t]
    if f.ever_nullable():
        return ["%s += wire::nullable_%s_size(%s, %s, %s);" % (acc, fn, ff, nullable, src)]
    return ["%s += wire::%s_size(%s, %s);" % (acc, fn, ff, src)]


def randomize_value(ctx, f, target, nullable):
    t = f.elem_type
    lines = []
    if f.ever_nullable() and t != "records":
        lines.append("if (%s && rng() %% 4 == 0) {" % nullable)
        lines.append("    %s.reset();" % target)
        lines.append("} else {")
        inner = "%s.emplace()" % target
        body = randomize_plain(ctx, f, "v")
        lines.append("    auto& v = %s;" % inner)
        lines += ["    " + x for x in body]
        lines.append("}")
        return lines
    if t == "records":
        return ["wire::randomize_records(rng, %s, %s);" % (target, nullable if f.ever_nullable() else "false")]
    return randomize_plain(ctx, f, target)


def randomize_plain(ctx, f, target):
    t = f.elem_type
    if f.is_array:
        lines = ["%s.clear();" % target,
                 "for (size_t i = 0, n = rng() %% %d; i < n; ++i) {" % (3 if f.has_struct else 5)]
        if f.has_struct:
            lines.append("    %s.emplace_back().randomize(rng, version);" % target)
        else:
            lines.append("    %s.push_back(wire::random_value<%s>(rng));" % (target, elem_cpp(f)))
        lines.append("}")
        return lines
    if f.has_struct:
        return ["%s.randomize(rng, version);" % target]
    return ["%s = wire::random_value<%s>(rng);" % (target, elem_cpp(f))]


def indent(lines, n=1):
    pad = "    " * n
    return [pad + x if x else x for x in lines]


def guarded(cond, body):
    if cond is None:
        return body
    return ["if (%s) {" % cond] + indent(body) + ["}"]


def emit_struct_decl(ctx, s, msg, depth):
    """Struct declaration lines (for the header)."""
    out = []
    out.append("struct %s {" % s.cpp_name)
    body = []
    if s is msg:
        if msg.key is not None:
            body.append("static constexpr api_key api = api_key::%s;" % api_snake(msg))
        body.append("static constexpr int16_t min_version = %d;" % msg.versions.lo)
        body.append("static constexpr int16_t max_version = %d;" % msg.versions.hi)
        ff = msg.flexible.lo if msg.flexible.lo is not None else -1
        body.append("static constexpr int16_t first_flexible_version = %d;" % ff)
        body.append("")
    for n in s.nested:
        body += emit_struct_decl(ctx, n, msg, depth + 1)
        body.append("")
    for f in s.fields:
        notes = ["v" + f.versions.text]
        if f.ever_nullable():
            notes.append("nullable v" + f.nullable.text)
        if f.tag is not None:
            notes.append("tag %d" % f.tag)
        body.append("%s %s%s;  // %s" % (field_cpp(f), member_name(f.name), field_default(f),
                                        ", ".join(notes)))
    top = s is msg
    if ctx.flex_set():
        if top:
            body.append("// Tagged fields this version does not know, re-encoded unchanged.")
        body.append("wire::unknown_tagged_fields unknown_tags;")
    body.append("")
    if top:
        body.append("// Reads the message at `version`; false (r.error() says why) on malformed")
        body.append("// input or an unsupported version. Records and nothing else borrow the frame.")
    body.append("[[nodiscard]] bool decode(wire::reader& r, int16_t version);")
    body.append("void encode(wire::writer& w, int16_t version) const;")
    if top:
        body.append("// Exact number of bytes encode() produces, file slices included.")
    body.append("[[nodiscard]] size_t encoded_size(int16_t version) const;")
    if top:
        body.append("// Fills every field present at `version` with random values (tests, fuzzing).")
    body.append("void randomize(std::mt19937_64& rng, int16_t version);")
    body.append("[[nodiscard]] static size_t min_encoded_size(int16_t version);")
    body.append("bool operator==(const %s&) const = default;" % s.cpp_name)
    out += indent(body)
    out.append("};")
    return out


def emit_struct_defs(ctx, s, msg):
    out = []
    for n in s.nested:
        out += emit_struct_defs(ctx, n, msg)
    q = s.qualified()
    has_flex = bool(ctx.flex_set())
    flex_cond = ctx.cond(ctx.flex_set())
    flex_line = []
    if has_flex:
        flex_line = ["const bool flex = %s;" % ("true" if flex_cond is None else flex_cond)]
    uses_flex = lambda text: "flex" in text  # noqa: E731

    # min_encoded_size
    expr = min_size_expr(ctx, s)
    out.append("size_t %s::min_encoded_size(int16_t version) {" % q)
    body = []
    if uses_flex(expr):
        body += flex_line
    if "version" not in expr and not uses_flex(expr):
        body.append("(void)version;")
    body.append("return %s;" % expr)
    out += indent(body) + ["}", ""]

    tagged = sorted([f for f in s.fields if ctx.tagged_set(f)], key=lambda f: f.tag)

    # decode
    body = []
    if s is msg:
        body.append("if (version < min_version || version > max_version) {")
        body.append("    r.fail(wire::read_error::unsupported_version);")
        body.append("    return false;")
        body.append("}")
    body += flex_line
    for f in s.fields:
        c = ctx.cond(ctx.regular_set(f))
        if c == "false":
            continue
        ff = ctx.field_flex(f)
        body += guarded(c, decode_value(ctx, f, member_name(f.name), ff, ctx.nullable_expr(f)))
    if has_flex:
        body.append("if (flex) {")
        tb = ["const uint32_t tag_count = r.read_uvarint();",
              "if (!r.can_hold(tag_count, 2)) {", "    return false;", "}"]
        known = []
        for f in tagged:
            c = ctx.cond(ctx.tagged_set(f))
            known.append("tag == %d%s" % (f.tag, "" if c is None else " && %s" % guard(c)))
        if known:
            tb.append("auto is_known = [version](uint32_t tag) {")
            tb.append("    (void)version;")
            tb.append("    return %s;" % " || ".join("(%s)" % k for k in known))
            tb.append("};")
        else:
            tb.append("auto is_known = [](uint32_t) { return false; };")
        tb.append("unknown_tags.clear();")
        tb.append("unknown_tags.reserve_for(r, tag_count, is_known);")
        tb.append("for (uint32_t i = 0; i < tag_count && r.ok(); ++i) {")
        lb = ["const uint32_t tag = r.read_uvarint();",
              "const auto body = r.read_bytes(r.read_uvarint());",
              "if (!r.ok()) {", "    return false;", "}"]
        first = True
        for f, k in zip(tagged, known):
            lb.append("%sif (%s) {" % ("" if first else "} else ", k))
            first = False
            inner = ["wire::reader tr(body, r);"]
            inner += decode_value(ctx, f, member_name(f.name), "true", ctx.nullable_expr(f), rd="tr")
            inner += ["if (!tr.ok() || tr.remaining() != 0) {",
                      "    r.fail(tr.ok() ? wire::read_error::bad_length : tr.error());",
                      "    return false;", "}"]
            lb += indent(inner)
        if tagged:
            lb.append("} else {")
            lb.append("    unknown_tags.append(tag, body);")
            lb.append("}")
        else:
            lb.append("unknown_tags.append(tag, body);")
        tb += indent(lb)
        tb.append("}")
        body += indent(tb)
        body.append("}")
    body.append("return r.ok();")
    out.append("bool %s::decode(wire::reader& r, int16_t version) {" % q)
    out += indent(body) + ["}", ""]

    # encode + size share the presence logic for tagged fields
    def tagged_presence():
        lines = []
        for i, f in enumerate(tagged):
            c = ctx.cond(ctx.tagged_set(f))
            expr = "!(%s)" % is_default_expr(f, member_name(f.name))
            if c is not None:
                expr = "%s && %s" % (guard(c), expr)
            lines.append("const bool has_tag%d = flex && %s;" % (i, expr))
        return lines

    body = list(flex_line)
    for f in s.fields:
        c = ctx.cond(ctx.regular_set(f))
        if c == "false":
            continue
        body += guarded(c, encode_value(ctx, f, member_name(f.name), ctx.field_flex(f),
                                        ctx.nullable_expr(f)))
    if has_flex:
        body.append("if (flex) {")
        tb = tagged_presence()
        cnt = " + ".join(["unknown_tags.count()"] + ["uint32_t{has_tag%d}" % i for i in range(len(tagged))])
        tb.append("w.write_uvarint(%s);" % cnt)
        tb.append("wire::unknown_tag_cursor unknown(unknown_tags);")
        for i, f in enumerate(tagged):
            tb.append("if (has_tag%d) {" % i)
            ib = ["unknown.write_below(w, %d);" % f.tag,
                  "size_t value_size = 0;"]
            ib += size_value(ctx, f, member_name(f.name), "true", ctx.nullable_expr(f), "value_size")
            ib += ["w.write_uvarint(%d);" % f.tag, "w.write_uvarint(value_size);"]
            ib += encode_value(ctx, f, member_name(f.name), "true", ctx.nullable_expr(f))
            tb += indent(ib)
            tb.append("}")
        tb.append("unknown.write_rest(w);")
        body += indent(tb)
        body.append("}")
    if not any("version" in x for x in body):
        body.insert(0, "(void)version;")
    out.append("void %s::encode(wire::writer& w, int16_t version) const {" % q)
    out += indent(body) + ["}", ""]

    body = list(flex_line)
    body.append("size_t n = 0;")
    for f in s.fields:
        c = ctx.cond(ctx.regular_set(f))
        if c == "false":
            continue
        body += guarded(c, size_value(ctx, f, member_name(f.name), ctx.field_flex(f),
                                      ctx.nullable_expr(f), "n"))
    if has_flex:
        body.append("if (flex) {")
        tb = tagged_presence()
        cnt = " + ".join(["unknown_tags.count()"] + ["uint32_t{has_tag%d}" % i for i in range(len(tagged))])
        tb.append("n += wire::uvarint_size(%s) + unknown_tags.raw_size();" % cnt)
        for i, f in enumerate(tagged):
            tb.append("if (has_tag%d) {" % i)
            ib = ["size_t value_size = 0;"]
            ib += size_value(ctx, f, member_name(f.name), "true", ctx.nullable_expr(f), "value_size")
            ib.append("n += wire::uvarint_size(%d) + wire::uvarint_size(value_size) + value_size;" % f.tag)
            tb += indent(ib)
            tb.append("}")
        body += indent(tb)
        body.append("}")
    body.append("return n;")
    if not any("version" in x for x in body):
        body.insert(0, "(void)version;")
    out.append("size_t %s::encoded_size(int16_t version) const {" % q)
    out += indent(body) + ["}", ""]

    # randomize
    body = []
    for f in s.fields:
        c = ctx.cond(ctx.vset(f.versions))
        if c == "false":
            continue
        body += guarded(c, randomize_value(ctx, f, member_name(f.name), ctx.nullable_expr(f)))
    if has_flex:
        body += ["if (%s) {" % ("true" if flex_cond is None else flex_cond),
                 "    wire::randomize_unknown_tags(rng, unknown_tags);", "}"]
    if not any("version" in x for x in body):
        body.insert(0, "(void)version;")
    if not any("rng" in x for x in body):
        body.insert(0, "(void)rng;")
    out.append("void %s::randomize(std::mt19937_64& rng, int16_t version) {" % q)
    out += indent(body) + ["}", ""]
    return out


def api_snake(msg):
    n = msg.name
    for suffix in ("Request", "Response"):
        if n.endswith(suffix):
            n = n[: -len(suffix)]
    return snake(n)
