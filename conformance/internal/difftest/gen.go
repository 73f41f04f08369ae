// Package difftest generates random well-typed policies and random records
// that match or break their schemas, for differential tests of the backends.
package difftest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// field is a schema field the generator may read: its path, its type and
// whether it is still there (removed, renamed and lifted fields are not).
type field struct {
	path string
	typ  string // "int", "int?", "string", "map<string>", ...
	gone bool
}

type local struct {
	name, typ string
}

// Gen writes one random policy. The same seed gives the same policy.
type Gen struct {
	r      *rand.Rand
	b      strings.Builder
	fields []*field
	locals [][]local
	nout   int
	nlocal int
	depth  int
	loop   bool // inside a for body: no edits of the iterated field
	// at is where the fields of schema live: "" in plain records,
	// ".attributes" in OTLP records (see otlp.go).
	at   string
	otlp bool
	body string // OTLP: the type the schema gives the body
	// fns are the functions a FuncPolicy declared so far (gen_func.go),
	// which expressions may call; none in Policy's policies.
	fns    []genFn
	fnText string // their declarations
}

// schema is the record shape every generated policy declares (an OTLP
// policy as its refined attributes). Records are generated from it too.
var schema = []struct{ name, typ string }{
	{"s", "string"},
	{"s2", "string?"},
	{"i", "int"},
	{"i2", "int?"},
	{"f", "float"},
	{"f2", "float?"},
	{"b", "bool"},
	{"arr", "array<int>"},
	{"sarr", "array<string>"},
	{"m", "map<string>"},
	{"o", "{x: int, y: string?}"},
	{"t", "string?"},
}

// Policy returns the source of a random policy for seed.
func Policy(seed uint64) string {
	g := &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	g.addSchemaFields()
	fault := ""
	if g.r.IntN(8) == 0 {
		fault = " on_fault drop"
	}
	fmt.Fprintf(&g.b, "policy \"diff-%d\"%s\n\nschema {\n", seed, fault)
	g.writeSchema(1)
	g.b.WriteString("}\n\n")
	g.locals = [][]local{nil}
	n := 3 + g.r.IntN(8)
	splitAt := -1
	if g.r.IntN(5) == 0 {
		splitAt = g.r.IntN(n)
	}
	for i := range n {
		if i == splitAt {
			g.split()
		}
		g.stmt(0, true)
	}
	if g.r.IntN(15) == 0 {
		// Replacing the whole record ends a policy: later reads of the
		// schema's fields would no longer check.
		switch g.r.IntN(3) {
		case 0:
			g.line(0, "set . = {\"only\": %s, \"n\": %s}", g.expr("string", 1), g.expr("int", 2))
		case 1:
			// A map<any> root: every field reads as any? after it.
			g.line(0, "set . = as_map(parse_json(%s)) ?? {\"none\": true}", g.expr("string", 1))
			g.line(0, "set .after = to_string(.x) + (as_string(.only) ?? \"-\")")
		default:
			g.line(0, "set . = as_map(.extra) ?? .o")
			g.line(0, "set .keys = len(keys(.))")
		}
	}
	return g.b.String()
}

// addSchemaFields adds the fields of schema, under g.at, to those the
// generator may read.
func (g *Gen) addSchemaFields() {
	for _, f := range schema {
		if f.name == "o" {
			g.fields = append(g.fields, &field{path: g.p(".o"), typ: "object"},
				&field{path: g.p(".o.x"), typ: "int"}, &field{path: g.p(".o.y"), typ: "string?"})
			continue
		}
		g.fields = append(g.fields, &field{path: g.p("." + f.name), typ: f.typ})
	}
}

// writeSchema writes the fields of schema, open, as the lines of an object
// type indented by indent levels.
func (g *Gen) writeSchema(indent int) {
	in := strings.Repeat("  ", indent)
	for _, f := range schema {
		if f.name == "o" {
			fmt.Fprintf(&g.b, "%so: {\n%s  x: int\n%s  y: string?\n%s}\n", in, in, in, in)
			continue
		}
		fmt.Fprintf(&g.b, "%s%s: %s\n", in, f.name, f.typ)
	}
	g.b.WriteString(in + "...\n")
}

// p returns the path of the schema's field at rel (".s2", ".o.y").
func (g *Gen) p(rel string) string { return g.at + rel }

// has reports whether the field at path is known and still there.
func (g *Gen) has(path string) bool {
	f := g.field(path)
	return f != nil && !f.gone
}

func (g *Gen) line(indent int, format string, args ...any) {
	g.b.WriteString(strings.Repeat("  ", indent))
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteByte('\n')
}

func (g *Gen) pick(list ...string) string { return list[g.r.IntN(len(list))] }

// readable returns the fields of type t (exactly) still present.
func (g *Gen) readable(t string) []string {
	var out []string
	for _, f := range g.fields {
		if !f.gone && f.typ == t {
			out = append(out, f.path)
		}
	}
	for _, scope := range g.locals {
		for _, l := range scope {
			if l.typ == t {
				out = append(out, l.name)
			}
		}
	}
	return out
}

func (g *Gen) field(path string) *field {
	for _, f := range g.fields {
		if f.path == path {
			return f
		}
	}
	return nil
}

func (g *Gen) outName() string {
	g.nout++
	return g.p(".out" + strconv.Itoa(g.nout))
}

// stmt writes one statement; top says whether structural edits (remove,
// rename, lift) are allowed (they change what later code may read).
func (g *Gen) stmt(indent int, top bool) {
	if g.otlp && g.r.IntN(3) == 0 {
		g.otlpStmt(indent, top)
		return
	}
	switch k := g.r.IntN(20); {
	case k < 6:
		g.setNew(indent)
	case k < 8:
		g.setExisting(indent)
	case k == 8:
		rel, t := g.pick(".s2", ".i2", ".f2", ".out_q"), "string"
		switch rel {
		case ".i2":
			t = "int"
		case ".f2":
			t = "float"
		}
		target := g.p(rel)
		if f := g.field(target); f != nil && f.gone || g.loop && rel != ".out_q" {
			target = g.outName()
		}
		g.line(indent, "set %s ?= %s", target, g.expr(t, 0))
	case k == 9 && top && !g.loop:
		g.structural(indent)
	case k == 10:
		g.line(indent, "drop when %s", g.expr("bool", 0))
	case k == 11:
		g.line(indent, "stop when %s", g.expr("bool", 0))
	case k == 12 && g.depth < 2:
		g.narrowIf(indent)
	case k < 14 && g.depth < 2:
		g.ifStmt(indent)
	case k < 16:
		g.let(indent)
	case k < 18 && g.depth < 2 && !g.loop:
		g.forStmt(indent)
	case k == 18 && g.r.IntN(2) == 0:
		g.line(indent, "set %%tag = %s", g.expr("string", 1))
	case k == 18:
		g.line(indent, "set %%time = parse_time(%s, %s) ?? now()", g.expr("string", 1), g.pick(`"%Y-%m-%d %H:%M:%S"`, `"%s"`, `"%d/%b/%Y:%H:%M:%S %z"`))
	default:
		g.setNew(indent)
	}
}

func (g *Gen) setNew(indent int) {
	t := g.pick("int", "float", "string", "bool", "int", "string", "any", "map<string>", "array<string>")
	out := g.outName()
	if g.r.IntN(6) == 0 {
		out += "." + g.pick("a", "b") // a nested new map
	}
	g.line(indent, "set %s = %s", out, g.expr(t, 0))
}

func (g *Gen) setExisting(indent int) {
	if g.loop {
		g.setNew(indent)
		return
	}
	switch g.r.IntN(7) {
	case 0:
		g.line(indent, "set %s = %s", g.p(".s"), g.expr("string", 0))
	case 1:
		g.line(indent, "set %s = %s", g.p(".i"), g.expr("int", 0))
	case 2:
		g.line(indent, "set %s = %s", g.p(".f"), g.expr("float", 0))
	case 3:
		if g.has(g.p(".m")) {
			g.line(indent, "set %s[%s] = %s", g.p(".m"), g.strLit(), g.expr("string", 1))
			return
		}
		g.setNew(indent)
	case 4:
		if g.has(g.p(".arr")) {
			g.line(indent, "set %s[%d] = %s", g.p(".arr"), g.r.IntN(5)-2, g.expr("int", 1))
			return
		}
		g.setNew(indent)
	case 5:
		if g.has(g.p(".o")) {
			g.line(indent, "set %s = %s", g.p(".o.x"), g.expr("int", 1))
			return
		}
		g.setNew(indent)
	default:
		g.line(indent, "set %s = %s", g.p(".b"), g.expr("bool", 0))
	}
}

func (g *Gen) structural(indent int) {
	switch g.r.IntN(5) {
	case 0:
		var ps []string
		for _, rel := range []string{".s2", ".i2", ".t", ".o.y", ".sarr"} {
			if f := g.field(g.p(rel)); !f.gone && g.r.IntN(2) == 0 {
				f.gone = true
				ps = append(ps, f.path)
			}
		}
		if len(ps) == 0 {
			ps = append(ps, g.p(".nothing_here"))
		}
		g.line(indent, "remove %s", strings.Join(ps, ", "))
	case 1:
		if f := g.field(g.p(".t")); !f.gone {
			f.gone = true
			g.line(indent, "rename %s to %s", f.path, g.outName())
			return
		}
		g.line(indent, "rename %s to %s", g.p(".absent_field"), g.outName())
	case 2:
		if f := g.field(g.p(".o")); !f.gone {
			f.gone = true
			g.field(g.p(".o.x")).gone = true
			g.field(g.p(".o.y")).gone = true
			g.line(indent, "lift %s prefix %q", f.path, g.pick("o_", "", "x"))
			return
		}
		g.setNew(indent)
	case 3:
		if f := g.field(g.p(".m")); !f.gone {
			f.gone = true
			g.line(indent, "lift %s%s", f.path, g.pick("", ` prefix "m_"`))
			return
		}
		g.setNew(indent)
	default:
		g.line(indent, "remove %s[%d]", g.p(g.pick(".arr", ".nope")), g.r.IntN(3)-1)
		if f := g.field(g.p(".arr")); !f.gone {
			f.gone = true
		}
	}
}

func (g *Gen) ifStmt(indent int) {
	g.depth++
	defer func() { g.depth-- }()
	g.line(indent, "if %s {", g.expr("bool", 0))
	g.block(indent + 1)
	switch g.r.IntN(3) {
	case 0:
		g.line(indent, "} else {")
		g.block(indent + 1)
	case 1:
		g.line(indent, "} else if %s {", g.expr("bool", 0))
		g.block(indent + 1)
	}
	g.line(indent, "}")
}

// narrowIf tests a value and uses it narrowed: P != null and the is_ tests
// turn T? and any into T inside the block; exists(P) proves P present only
// (it may hold null), so a default is still needed there.
func (g *Gen) narrowIf(indent int) {
	g.depth++
	defer func() { g.depth-- }()
	out := g.outName()
	// ifSet writes if cond { set out = value }.
	ifSet := func(cond, value string) {
		g.line(indent, "if %s {", cond)
		g.line(indent+1, "set %s = %s", out, value)
		g.line(indent, "}")
	}
	switch g.r.IntN(6) {
	case 0:
		if i2 := g.p(".i2"); g.has(i2) {
			switch g.r.IntN(3) {
			case 0:
				ifSet("exists("+i2+")", "("+i2+" ?? -1) + "+g.expr("int", 2))
			case 1:
				ifSet("is_int("+i2+")", i2+" + "+g.expr("int", 2))
			default:
				ifSet(i2+" != null", i2+" + "+g.expr("int", 2))
			}
			return
		}
	case 1:
		if s2 := g.p(".s2"); g.has(s2) {
			ifSet(s2+" != null", "upper("+s2+")")
			return
		}
	case 2:
		x := g.p(".extra")
		g.line(indent, "if is_string(%s) {", x)
		g.line(indent+1, "set %s = %s + %s", out, x, g.strLit())
		g.line(indent, "} else if is_int(%s) && %s > 0 {", x, x)
		g.line(indent+1, "set %s = to_string(%s * 2)", out, x)
		g.line(indent, "}")
		return
	case 3:
		g.nlocal++
		name := "c" + strconv.Itoa(g.nlocal)
		g.line(indent, "let %s = capture(%s, `(?P<k>[a-z]+)=(?P<v>[0-9]*)`)", name, g.expr("string", 1))
		ifSet(name+" != null", name+`["k"] + ":" + `+name+`["v"]`)
		return
	case 4:
		if f2 := g.p(".f2"); g.has(f2) {
			ifSet("exists("+f2+") && "+f2+" != null", f2+" * 2.0")
			return
		}
	}
	// The last form, also for the cases above whose field is gone.
	x := g.p(".extra")
	ifSet("is_map("+x+")", "len(keys(as_map("+x+") ?? {}))")
}

func (g *Gen) block(indent int) {
	g.locals = append(g.locals, nil)
	for range 1 + g.r.IntN(3) {
		g.stmt(indent, false)
	}
	g.locals = g.locals[:len(g.locals)-1]
}

func (g *Gen) let(indent int) {
	t := g.pick("int", "string", "float", "bool", "map<string>", "array<string>")
	v := g.expr(t, 0)
	g.nlocal++
	name := "v" + strconv.Itoa(g.nlocal)
	g.line(indent, "let %s = %s", name, v)
	top := len(g.locals) - 1
	g.locals[top] = append(g.locals[top], local{name, t})
}

func (g *Gen) forStmt(indent int) {
	g.depth++
	g.loop = true
	defer func() { g.depth--; g.loop = false }()
	g.nlocal++
	k, v := "k"+strconv.Itoa(g.nlocal), "e"+strconv.Itoa(g.nlocal)
	var coll, kt, vt string
	switch g.r.IntN(4) {
	case 0:
		if f := g.field(g.p(".arr")); !f.gone {
			coll, kt, vt = f.path, "int", "int"
			break
		}
		fallthrough
	case 1:
		coll, kt, vt = "split("+g.expr("string", 1)+", \",\")", "int", "string"
	case 2:
		if f := g.field(g.p(".m")); !f.gone {
			coll, kt, vt = f.path, "string", "string"
			break
		}
		fallthrough
	default:
		coll, kt, vt = "parse_kv("+g.expr("string", 1)+", \",\", \"=\") ?? {}", "string", "string"
	}
	if g.otlp && g.r.IntN(3) == 0 {
		coll, kt, vt = g.otlpCollection()
	}
	acc := g.outName()
	g.line(indent, "set %s = %s", acc, g.pick("0", `""`))
	g.line(indent, "for %s, %s in %s {", k, v, coll)
	// A value of type any (of an OTLP map) is not read but by the line
	// below: it could be a time, whose nanoseconds are beyond 2^53.
	g.locals = append(g.locals, []local{{k, kt}, {v, strings.Replace(vt, "any", "any?", 1)}})
	if strings.HasSuffix(g.b.String(), "= 0\n"+strings.Repeat("  ", indent)+"for "+k+", "+v+" in "+coll+" {\n") {
		switch vt {
		case "int":
			g.line(indent+1, "set %s = %s + %s", acc, acc, v)
		case "any":
			g.line(indent+1, "set %s = %s + len(to_string(%s))", acc, acc, v)
		default:
			g.line(indent+1, "set %s = %s + len(%s)", acc, acc, v)
		}
	} else {
		g.line(indent+1, "set %s = %s + to_string(%s) + \";\"", acc, acc, k)
	}
	for range g.r.IntN(2) {
		g.stmt(indent+1, false)
	}
	g.locals = g.locals[:len(g.locals)-1]
	g.line(indent, "}")
}

// split writes split of one of the array fields still there: from then
// on the field holds one element.
func (g *Gen) split() {
	var arrays []*field
	for _, f := range g.fields {
		if !f.gone && strings.HasPrefix(f.typ, "array<") {
			arrays = append(arrays, f)
		}
	}
	if len(arrays) == 0 {
		return
	}
	f := arrays[g.r.IntN(len(arrays))]
	g.line(0, "split %s", f.path)
	f.typ = strings.TrimSuffix(strings.TrimPrefix(f.typ, "array<"), ">")
}
