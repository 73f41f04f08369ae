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
}

// schema is the record shape every generated policy declares. Records are
// generated from it too.
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
	for _, f := range schema {
		if f.name == "o" {
			g.fields = append(g.fields, &field{path: ".o", typ: "object"},
				&field{path: ".o.x", typ: "int"}, &field{path: ".o.y", typ: "string?"})
			continue
		}
		g.fields = append(g.fields, &field{path: "." + f.name, typ: f.typ})
	}
	fault := ""
	if g.r.IntN(8) == 0 {
		fault = " on_fault drop"
	}
	fmt.Fprintf(&g.b, "policy \"diff-%d\"%s\n\nschema {\n", seed, fault)
	for _, f := range schema {
		if f.name == "o" {
			g.b.WriteString("  o: {\n    x: int\n    y: string?\n  }\n")
			continue
		}
		fmt.Fprintf(&g.b, "  %s: %s\n", f.name, f.typ)
	}
	g.b.WriteString("  ...\n}\n\n")
	g.locals = [][]local{nil}
	n := 3 + g.r.IntN(8)
	for range n {
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
	return ".out" + strconv.Itoa(g.nout)
}

// stmt writes one statement; top says whether structural edits (remove,
// rename, lift) are allowed (they change what later code may read).
func (g *Gen) stmt(indent int, top bool) {
	switch k := g.r.IntN(20); {
	case k < 6:
		g.setNew(indent)
	case k < 8:
		g.setExisting(indent)
	case k == 8:
		target, t := g.pick(".s2", ".i2", ".f2", ".out_q"), "string"
		switch target {
		case ".i2":
			t = "int"
		case ".f2":
			t = "float"
		}
		if f := g.field(target); f != nil && f.gone || g.loop && target != ".out_q" {
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
		g.line(indent, "set .s = %s", g.expr("string", 0))
	case 1:
		g.line(indent, "set .i = %s", g.expr("int", 0))
	case 2:
		g.line(indent, "set .f = %s", g.expr("float", 0))
	case 3:
		if !g.field(".m").gone {
			g.line(indent, "set .m[%s] = %s", g.strLit(), g.expr("string", 1))
			return
		}
		g.setNew(indent)
	case 4:
		if !g.field(".arr").gone {
			g.line(indent, "set .arr[%d] = %s", g.r.IntN(5)-2, g.expr("int", 1))
			return
		}
		g.setNew(indent)
	case 5:
		if !g.field(".o").gone {
			g.line(indent, "set .o.x = %s", g.expr("int", 1))
			return
		}
		g.setNew(indent)
	default:
		g.line(indent, "set .b = %s", g.expr("bool", 0))
	}
}

func (g *Gen) structural(indent int) {
	switch g.r.IntN(5) {
	case 0:
		var ps []string
		for _, p := range []string{".s2", ".i2", ".t", ".o.y", ".sarr"} {
			if f := g.field(p); !f.gone && g.r.IntN(2) == 0 {
				f.gone = true
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			ps = append(ps, ".nothing_here")
		}
		g.line(indent, "remove %s", strings.Join(ps, ", "))
	case 1:
		if f := g.field(".t"); !f.gone {
			f.gone = true
			g.line(indent, "rename .t to %s", g.outName())
			return
		}
		g.line(indent, "rename .absent_field to %s", g.outName())
	case 2:
		if f := g.field(".o"); !f.gone {
			f.gone = true
			g.field(".o.x").gone = true
			g.field(".o.y").gone = true
			g.line(indent, "lift .o prefix %q", g.pick("o_", "", "x"))
			return
		}
		g.setNew(indent)
	case 3:
		if f := g.field(".m"); !f.gone {
			f.gone = true
			g.line(indent, "lift .m%s", g.pick("", ` prefix "m_"`))
			return
		}
		g.setNew(indent)
	default:
		g.line(indent, "remove %s[%d]", g.pick(".arr", ".nope"), g.r.IntN(3)-1)
		if f := g.field(".arr"); !f.gone {
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
		if !g.field(".i2").gone {
			switch g.r.IntN(3) {
			case 0:
				ifSet("exists(.i2)", "(.i2 ?? -1) + "+g.expr("int", 2))
			case 1:
				ifSet("is_int(.i2)", ".i2 + "+g.expr("int", 2))
			default:
				ifSet(".i2 != null", ".i2 + "+g.expr("int", 2))
			}
			return
		}
	case 1:
		if !g.field(".s2").gone {
			ifSet(".s2 != null", "upper(.s2)")
			return
		}
	case 2:
		g.line(indent, "if is_string(.extra) {")
		g.line(indent+1, "set %s = .extra + %s", out, g.strLit())
		g.line(indent, "} else if is_int(.extra) && .extra > 0 {")
		g.line(indent+1, "set %s = to_string(.extra * 2)", out)
		g.line(indent, "}")
		return
	case 3:
		g.nlocal++
		name := "c" + strconv.Itoa(g.nlocal)
		g.line(indent, "let %s = capture(%s, `(?P<k>[a-z]+)=(?P<v>[0-9]*)`)", name, g.expr("string", 1))
		ifSet(name+" != null", name+`["k"] + ":" + `+name+`["v"]`)
		return
	case 4:
		if !g.field(".f2").gone {
			ifSet("exists(.f2) && .f2 != null", ".f2 * 2.0")
			return
		}
	}
	// The last form, also for the cases above whose field is gone.
	ifSet("is_map(.extra)", "len(keys(as_map(.extra) ?? {}))")
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
		if f := g.field(".arr"); !f.gone {
			coll, kt, vt = ".arr", "int", "int"
			break
		}
		fallthrough
	case 1:
		coll, kt, vt = "split("+g.expr("string", 1)+", \",\")", "int", "string"
	case 2:
		if f := g.field(".m"); !f.gone {
			coll, kt, vt = ".m", "string", "string"
			break
		}
		fallthrough
	default:
		coll, kt, vt = "parse_kv("+g.expr("string", 1)+", \",\", \"=\") ?? {}", "string", "string"
	}
	acc := g.outName()
	g.line(indent, "set %s = %s", acc, g.pick("0", `""`))
	g.line(indent, "for %s, %s in %s {", k, v, coll)
	g.locals = append(g.locals, []local{{k, kt}, {v, vt}})
	if strings.HasSuffix(g.b.String(), "= 0\n"+strings.Repeat("  ", indent)+"for "+k+", "+v+" in "+coll+" {\n") {
		if vt == "int" {
			g.line(indent+1, "set %s = %s + %s", acc, acc, v)
		} else {
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
