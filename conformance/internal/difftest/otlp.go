package difftest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// This file generates OTLP policies (`schema otlp { … }`, docs/otlp.md):
// the fields of schema become refined attributes (.attributes.s, …), next
// to the view's fixed keys, refined resource attributes, the scope and a
// body of a type chosen per policy. The statements and expressions of
// gen.go and expr.go are reused, with their paths under .attributes;
// otlpStmt and otlpExpr add those of the view.

// bodyTypes are the types an OTLP policy may give its body.
var bodyTypes = []string{"any?", "string?", "string", "map<string>", "object", "any?"}

// OTLPBody returns the type the OTLP policy of seed gives the body: "any?",
// "string?", "string", "map<string>" or "object" ({msg: string?, code:
// int?, ...}). Records for that policy are made with it (OTLPRecord).
func OTLPBody(seed uint64) string {
	h := (seed + 1) * 0x9e3779b97f4a7c15
	return bodyTypes[(h>>32)%uint64(len(bodyTypes))]
}

// resourceSchema is the refinement of the resource's attributes, when the
// policy declares one.
var resourceSchema = []struct{ name, typ string }{
	{`"service.name"`, "string"},
	{`"host.name"`, "string?"},
	{"ri", "int?"},
	{"rarr", "array<string>"},
}

// resAttr returns the path of a resource attribute, quoted or not as the
// schema writes it.
func resAttr(name string) string {
	if strings.HasPrefix(name, `"`) {
		return ".resource.attributes[" + name + "]"
	}
	return ".resource.attributes." + name
}

// OTLPPolicy returns the source of a random OTLP policy for seed.
func OTLPPolicy(seed uint64) string {
	g := &Gen{r: rand.New(rand.NewPCG(seed, seed^0xd1b54a32d192ed03)), at: ".attributes", otlp: true, body: OTLPBody(seed)}
	g.addSchemaFields()
	for _, f := range []struct{ path, typ string }{
		{".severity_text", "string"}, {".severity_number", "int"}, {".observed_time", "timestamp"},
		{".trace_id", "string"}, {".span_id", "string"}, {".flags", "int"}, {".event_name", "string"},
		{".dropped_attributes_count", "int"}, {".resource.schema_url", "string"},
		{".resource.dropped_attributes_count", "int"}, {".scope.name", "string"}, {".scope.version", "string"},
		{".scope.schema_url", "string"},
	} {
		g.fields = append(g.fields, &field{path: f.path, typ: f.typ})
	}
	switch g.body {
	case "object":
		g.fields = append(g.fields, &field{path: ".body", typ: "object"},
			&field{path: ".body.msg", typ: "string?"}, &field{path: ".body.code", typ: "int?"})
	default:
		g.fields = append(g.fields, &field{path: ".body", typ: g.body})
	}
	resRefined, scopeRefined := g.r.IntN(4) != 0, g.r.IntN(2) == 0
	if resRefined {
		for _, f := range resourceSchema {
			g.fields = append(g.fields, &field{path: resAttr(f.name), typ: f.typ})
		}
	}
	if scopeRefined {
		g.fields = append(g.fields, &field{path: ".scope.attributes", typ: "map<string>"})
	}

	fault := ""
	if g.r.IntN(8) == 0 {
		fault = " on_fault drop"
	}
	fmt.Fprintf(&g.b, "policy \"otlp-diff-%d\"%s\n\nschema otlp {\n", seed, fault)
	switch {
	case g.body == "object":
		g.b.WriteString("  body: {\n    msg: string?\n    code: int?\n    ...\n  }\n")
	case g.body != "any?" || g.r.IntN(2) == 0:
		fmt.Fprintf(&g.b, "  body: %s\n", g.body)
	}
	g.b.WriteString("  attributes: {\n")
	g.writeSchema(2)
	g.b.WriteString("  }\n")
	if resRefined {
		g.b.WriteString("  resource: {\n    attributes: {\n")
		for _, f := range resourceSchema {
			fmt.Fprintf(&g.b, "      %s: %s\n", f.name, f.typ)
		}
		g.b.WriteString("      ...\n    }\n  }\n")
	}
	if scopeRefined {
		g.b.WriteString("  scope: {\n    attributes: map<string>\n  }\n")
	}
	g.b.WriteString("}\n\n")

	g.locals = [][]local{nil}
	n := 4 + g.r.IntN(10)
	for range n {
		g.stmt(0, true)
	}
	switch g.r.IntN(24) {
	case 0, 1:
		// As Policy's set . = {…}, but an OTLP record keeps its view: the
		// attributes are replaced (an object, closed: this ends a policy).
		g.line(0, "set .attributes = {\"only\": %s, \"n\": %s}", g.expr("string", 1), g.expr("int", 2))
	case 2:
		// Keys of the view removed (absent in the run, their defaults in
		// the record after it), or moved.
		g.line(0, "remove %s", g.pick(".attributes", ".resource", ".scope", ".resource.attributes", ".attributes, .resource, .scope, .body"))
	case 3:
		if g.body == "any?" {
			g.line(0, "rename .attributes to .body")
			break
		}
		g.line(0, "rename .resource.attributes to .attributes.res")
	}
	return g.b.String()
}

// hexID returns n random hex digits, lower-case or, when upper, mixed.
func (g *Gen) hexID(n int, upper bool) string {
	const digits = "0123456789abcdef0123456789ABCDEF"
	b := make([]byte, n)
	for i := range b {
		if upper {
			b[i] = digits[g.r.IntN(32)]
		} else {
			b[i] = digits[g.r.IntN(16)]
		}
	}
	return string(b)
}

// idExpr returns a string for .trace_id (digits 32) or .span_id (16):
// mostly valid ids ("" or hex of that length, either case), sometimes
// not, which the run's end faults (otlp_view).
func (g *Gen) idExpr(digits int) string {
	other := ".span_id"
	if digits == 16 {
		other = ".trace_id"
	}
	switch g.r.IntN(14) {
	case 0, 1, 2:
		return strconv.Quote(g.hexID(digits, false))
	case 3:
		return strconv.Quote(g.hexID(digits, true))
	case 4:
		return `""`
	case 5, 6:
		return fmt.Sprintf("substr(sha256_hex(%s), 0, %d)", g.expr("string", 2), digits)
	case 7:
		return fmt.Sprintf("upper(substr(sha256_hex(%s), 0, %d))", g.expr("string", 2), digits)
	case 8:
		if g.has(other) {
			// Valid only when the other id is "".
			return other
		}
		return `""`
	case 9:
		return fmt.Sprintf("substr(sha256_hex(%s), %d, %d)", g.expr("string", 2), g.r.IntN(3), g.r.IntN(digits+4))
	case 10:
		// One digit too many or too few, or a letter past f.
		switch id := g.hexID(digits, false); g.r.IntN(3) {
		case 0:
			return strconv.Quote(id[1:])
		case 1:
			return strconv.Quote(id + "0")
		default:
			return strconv.Quote(id[:digits-1] + "g")
		}
	case 11:
		return g.expr("string", 1)
	case 12:
		self := ".trace_id"
		if digits == 16 {
			self = ".span_id"
		}
		if g.has(self) {
			return g.pick("lower", "upper", "trim") + "(" + self + ")"
		}
		return `""`
	default:
		return fmt.Sprintf("(%s ?? %q)", g.p(".s2"), g.hexID(digits, false))
	}
}

// otlpStmt writes a statement over the view: writes of the fixed keys,
// the resource, the scope and the body; at the top level also removes and
// renames across them, which change what later code may read.
func (g *Gen) otlpStmt(indent int, top bool) {
	structural := top && !g.loop
	switch k := g.r.IntN(26); {
	case k < 2:
		if g.r.IntN(2) == 0 {
			g.line(indent, "set .severity_text = %s", g.expr("string", 1))
		} else {
			g.line(indent, "set .severity_text = %s", g.pick(`"INFO"`, `"WARN"`, `"ERROR"`, `""`, `"debug"`))
		}
	case k < 4:
		if g.r.IntN(2) == 0 {
			g.line(indent, "set .severity_number = %s", g.expr("int", 1))
		} else {
			g.line(indent, "set .severity_number = %d", g.r.IntN(25))
		}
	case k == 4 && g.loop:
		// A loop may iterate the resource or the scope: not their keys.
		g.line(indent, "set .%s = %s", g.pick("flags", "dropped_attributes_count"), g.expr("int", 1))
	case k == 4:
		g.line(indent, "set .%s = %s", g.pick("flags", "dropped_attributes_count", "resource.dropped_attributes_count", "scope.dropped_attributes_count"), g.expr("int", 1))
	case k == 5 && g.loop:
		g.line(indent, "set .event_name = %s", g.expr("string", 1))
	case k == 5:
		g.line(indent, "set .%s = %s", g.pick("event_name", "scope.name", "scope.version", "resource.schema_url", "scope.schema_url"), g.expr("string", 1))
	case k < 9:
		if g.r.IntN(2) == 0 {
			g.line(indent, "set .trace_id = %s", g.idExpr(32))
		} else {
			g.line(indent, "set .span_id = %s", g.idExpr(16))
		}
	case k == 9:
		if g.r.IntN(2) == 0 {
			g.line(indent, "set .observed_time = %s", g.timeExpr())
		} else {
			g.line(indent, "set %%time = %s", g.timeExpr())
		}
	case k < 12 && !g.loop:
		g.resourceWrite(indent)
	case k == 12 && !g.loop:
		key := g.pick(`"k"`, `"lib"`, `"z"`)
		if g.has(".scope.attributes") {
			g.line(indent, "set .scope.attributes[%s] = %s", key, g.expr("string", 1))
		} else {
			g.line(indent, "set .scope.attributes[%s] = %s", key, g.expr(g.pick("string", "int", "any"), 1))
		}
	case k < 15 && !g.loop:
		g.bodyWrite(indent)
	case k == 15:
		g.line(indent, "drop when %s", g.otlpCond())
	case k == 16 && g.depth < 2:
		g.depth++
		g.line(indent, "if %s {", g.otlpCond())
		g.block(indent + 1)
		g.line(indent, "}")
		g.depth--
	case k == 17 && structural:
		g.otlpRemove(indent)
	case k == 18 && structural:
		g.otlpRename(indent)
	case k == 19 && structural && g.r.IntN(2) == 0:
		g.replaceGroup(indent)
	case k == 20:
		// A copy of a group: later edits of either do not reach the other.
		out := g.outName()
		g.line(indent, "set %s = %s", out, g.pick(".resource", ".scope", ".resource.attributes", ".attributes"))
		if !g.loop {
			g.line(indent, "set %s.%s = %s", out, g.pick("x", "attributes.x", "name"), g.expr("int", 2))
		}
	case k == 21:
		g.line(indent, "set %s = %s", g.outName(), g.pick(".trace_id", ".span_id", ".observed_time", ".severity_number", ".body", ".scope.name"))
	default:
		g.setNew(indent)
	}
}

// otlpCond returns a condition on the view.
func (g *Gen) otlpCond() string {
	switch g.r.IntN(6) {
	case 0:
		if g.has(".severity_number") {
			return fmt.Sprintf(".severity_number %s %d", g.pick("<", ">=", "=="), g.r.IntN(25))
		}
	case 1:
		if g.has(".trace_id") {
			return g.pick(`.trace_id == ""`, `.trace_id != ""`, "(hash64(.trace_id) % 100) < 50")
		}
	case 2:
		return g.pick("exists(.body)", "is_map(.body)", ".body == null", "is_string(.body)")
	case 3:
		if g.has(resAttr(`"host.name"`)) {
			return resAttr(`"host.name"`) + " == null"
		}
		return `exists(.resource.attributes["service.name"])`
	case 4:
		return fmt.Sprintf(`starts_with(.scope.name, %s)`, g.pick(`"io."`, `""`, `"a"`))
	}
	return g.expr("bool", 0)
}

// replaceGroup replaces the resource or the scope, or their attributes,
// with maps of strings: reads of them still check (the refined fields are
// gone), and the record's copy is the one changed.
func (g *Gen) replaceGroup(indent int) {
	// Not a literal, which would make the map a closed object.
	m := "(parse_logfmt(" + g.expr("string", 2) + ") ?? {})"
	if g.r.IntN(2) == 0 {
		m = "(parse_kv(" + g.expr("string", 2) + `, ",", "=") ?? {})`
	}
	switch g.r.IntN(4) {
	case 0:
		g.line(indent, "set .resource = {\"attributes\": %s}", m)
		g.forget(".resource.")
	case 1:
		g.line(indent, "set .resource.attributes = %s", m)
		g.forget(".resource.attributes")
	case 2:
		g.line(indent, "set .scope = {\"name\": %s, \"version\": %s, \"attributes\": %s}", g.expr("string", 2), g.expr("string", 2), m)
		g.forget(".scope.")
		g.retype(".scope.name", "string")
		g.retype(".scope.version", "string")
		g.retype(".scope.attributes", "map<string>")
	default:
		g.line(indent, "set .scope.attributes = %s", m)
		g.retype(".scope.attributes", "map<string>")
	}
}

// forget marks the fields under prefix gone.
func (g *Gen) forget(prefix string) {
	for _, f := range g.fields {
		if strings.HasPrefix(f.path, prefix) {
			f.gone = true
		}
	}
}

// retype makes the field at path present with type t.
func (g *Gen) retype(path, t string) {
	if f := g.field(path); f != nil {
		f.typ, f.gone = t, false
		return
	}
	g.fields = append(g.fields, &field{path: path, typ: t})
}

// resourceWrite writes a resource attribute: a refined one with its type,
// or a new one with any.
func (g *Gen) resourceWrite(indent int) {
	if g.r.IntN(2) == 0 {
		f := resourceSchema[g.r.IntN(len(resourceSchema))]
		if p := resAttr(f.name); g.has(p) {
			t := strings.TrimSuffix(f.typ, "?")
			if t == "array<string>" && g.r.IntN(2) == 0 {
				g.line(indent, "set %s[%d] = %s", p, g.r.IntN(3)-1, g.expr("string", 1))
				return
			}
			g.line(indent, "set %s = %s", p, g.expr(t, 1))
			return
		}
	}
	key := g.pick(`"deployment.environment"`, `"k8s.pod.name"`, "r1", "r2")
	g.line(indent, "set %s = %s", resAttr(key), g.expr(g.pick("string", "int", "any", "map<string>", "bool"), 1))
}

// bodyWrite writes the body, or a part of it, of its declared type.
func (g *Gen) bodyWrite(indent int) {
	switch g.body {
	case "object":
		switch g.r.IntN(3) {
		case 0:
			if g.has(".body") {
				g.line(indent, "set .body.msg = %s", g.expr("string", 1))
				return
			}
		case 1:
			if g.has(".body") {
				g.line(indent, "set .body.code = %s", g.expr("int", 1))
				return
			}
		}
		g.line(indent, "set .body = {\"msg\": %s, \"code\": %s}", g.expr("string", 1), g.expr("int", 2))
		for _, f := range g.fields {
			if f.path == ".body" || strings.HasPrefix(f.path, ".body.") {
				f.gone = false
			}
		}
	case "map<string>":
		if g.has(".body") && g.r.IntN(2) == 0 {
			g.line(indent, "set .body[%s] = %s", g.strLit(), g.expr("string", 1))
			return
		}
		g.line(indent, "set .body = %s", g.expr("map<string>", 1))
		g.field(".body").gone = false
	case "any?":
		if g.r.IntN(5) == 0 {
			// Null is a body (an empty AnyValue); absent is none.
			g.line(indent, "set .body = %s", g.pick("null", ".attributes.nothing", "null", g.p(".s2")))
			return
		}
		if g.r.IntN(3) == 0 {
			// A write into a body that may be a scalar: path_conflict.
			g.line(indent, "set .body.%s = %s", g.pick("k", "n"), g.expr(g.pick("string", "int"), 1))
			return
		}
		g.line(indent, "set .body = %s", g.expr(g.pick("string", "any", "map<string>", "int", "array<string>"), 1))
	default:
		g.line(indent, "set .body = %s", g.expr("string", 1))
		g.field(".body").gone = false
	}
}

// otlpRemove removes keys of the view: fixed keys (which then read as
// their defaults, the checker types them optional), the body, resource
// attributes.
func (g *Gen) otlpRemove(indent int) {
	var ps []string
	for _, p := range []string{".body", ".severity_text", ".trace_id", ".event_name", ".scope.version", ".flags", ".observed_time",
		resAttr(`"host.name"`), resAttr("ri"), `.resource.attributes["k8s.pod.name"]`, ".scope.attributes.k"} {
		if g.r.IntN(5) != 0 {
			continue
		}
		ps = append(ps, p)
		for _, f := range g.fields {
			if f.path == p || strings.HasPrefix(f.path, p+".") {
				f.gone = true
			}
		}
	}
	if len(ps) == 0 {
		ps = append(ps, ".attributes.nothing_here")
	}
	g.line(indent, "remove %s", strings.Join(ps, ", "))
}

// otlpRename moves values between the attributes, the resource and the
// scope.
func (g *Gen) otlpRename(indent int) {
	from, to := "", ""
	switch g.r.IntN(4) {
	case 0:
		from, to = g.p(".s2"), `.resource.attributes["moved"]`
	case 1:
		from, to = resAttr(`"host.name"`), g.outName()
	case 2:
		from, to = ".scope.version", g.outName()
	default:
		from, to = ".scope.attributes.k", `.resource.attributes["from_scope"]`
	}
	if f := g.field(from); f != nil {
		if f.gone {
			from = ".attributes.absent_field"
		}
		f.gone = true
	}
	g.line(indent, "rename %s to %s", from, to)
}

// otlpExpr returns an expression of type t over the view, or "" when it
// has none of that type (expr then goes on as for plain records).
func (g *Gen) otlpExpr(t string, d int) string {
	switch t {
	case "int":
		switch g.r.IntN(7) {
		case 5:
			return "len(" + g.pick(".", "keys(.)", "to_string(.)") + ")"
		case 0:
			if g.has(".trace_id") {
				return "len(" + g.pick(".trace_id", ".span_id") + ")"
			}
		case 1:
			return "len(" + g.pick(".attributes", ".resource.attributes", ".scope.attributes", "keys(.resource)") + ")"
		case 2:
			if g.has(".trace_id") {
				return "(hash64(.trace_id) % 100)"
			}
		case 3:
			if g.has(resAttr("ri")) {
				return "(" + resAttr("ri") + " ?? -1)"
			}
		case 4:
			switch g.body {
			case "object":
				return "(.body.code ?? 0)"
			case "any?":
				return "(to_int(.body) ?? 0)"
			}
		}
		if g.has(".severity_number") {
			return "(.severity_number + " + g.expr("int", d) + ")"
		}
	case "float":
		if g.has(".severity_number") {
			return "(to_float(.severity_number) ?? 0.5)"
		}
	case "string":
		switch g.r.IntN(7) {
		case 0:
			if g.has(resAttr(`"host.name"`)) {
				return "(" + resAttr(`"host.name"`) + " ?? \"none\")"
			}
		case 1:
			return "to_string(" + g.pick(".body", ".resource", ".scope", ".attributes", ".resource.attributes", ".observed_time") + ")"
		case 2:
			if g.has(".scope.version") {
				return "(.scope.name + \"/\" + .scope.version)"
			}
		case 3:
			switch g.body {
			case "string?":
				return "(.body ?? \"nobody\")"
			case "map<string>":
				return "(.body[" + g.strLit() + "] ?? \"-\")"
			case "object":
				return "(.body.msg ?? \"-\")"
			case "any?":
				return "(as_string(.body) ?? \"-\")"
			}
		case 4:
			if g.has(".scope.attributes") {
				return "(.scope.attributes[" + g.pick(`"k"`, `"lib"`) + "] ?? \"-\")"
			}
			return "to_string(.scope.attributes[\"k\"])"
		case 5:
			if g.has(".span_id") {
				return g.pick("upper", "trim") + "(.span_id)"
			}
		}
		if g.r.IntN(3) == 0 {
			// Keys of the view a policy may have removed: absent then.
			return "(" + g.pick(".severity_text", ".trace_id", ".event_name", ".scope.version") + " ?? \"gone\")"
		}
		// .attributes.raw is bytes in some records (CompareOTLPRequest).
		return g.pick("type_of", "to_string") + "(" + g.pick(".body", `.resource.attributes["service.name"]`, ".attributes.extra", ".scope.attributes.k", ".attributes.raw") + ")"
	case "bool":
		return g.otlpCond()
	case "any":
		// Not .observed_time: its nanoseconds, to_int of it, are beyond
		// 2^53, where the Lua backend's floats are not held to be exact.
		return g.pick(".body", ".resource", ".scope", ".attributes", ".resource.attributes", ".scope.attributes", `.resource.attributes["service.name"]`, ".attributes.raw")
	case "array<string>":
		if g.has(resAttr("rarr")) && g.r.IntN(2) == 0 {
			return resAttr("rarr")
		}
		return "keys(" + g.pick(".attributes", ".resource.attributes", ".resource", ".scope.attributes", ".") + ")"
	case "map<string>":
		if g.body == "map<string>" && g.has(".body") {
			return ".body"
		}
	}
	return ""
}

// otlpCollection returns a collection over the view for a for, with the
// types of its keys and values. None is edited by the loop body, which
// writes only fixed scalars and new attributes there.
func (g *Gen) otlpCollection() (coll, kt, vt string) {
	switch g.r.IntN(5) {
	case 0:
		return "keys(" + g.pick(".attributes", ".resource.attributes") + ")", "int", "string"
	case 1:
		if g.has(".scope.attributes") {
			return ".scope.attributes", "string", "string"
		}
		return ".scope.attributes", "string", "any"
	case 2:
		if g.has(resAttr("rarr")) {
			return resAttr("rarr"), "int", "string"
		}
	case 3:
		// The keys of a group: the loop body writes none of them.
		return g.pick(".scope", ".resource"), "string", "any"
	}
	return ".resource.attributes", "string", "any"
}
