package difftest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
)

// genFn is a function a FuncPolicy declares: two parameters and a result,
// or, for a layout function, the arguments args draws.
type genFn struct {
	name, a, b, result string
	args               func(d int) string
}

// fnTypes are the types of the functions' parameters and results.
var fnTypes = []string{"int", "string", "bool", "float"}

// FuncPolicy returns a random policy that declares functions and calls
// them from its expressions, with random arguments: the VM inlines each
// call, the Lua backend calls a function of its chunk, and the two must
// agree (a fault inside a body included). The same seed gives the same
// policy; Policy's policies are not changed by it.
func FuncPolicy(seed uint64) string {
	g := &Gen{r: rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))}
	g.addSchemaFields()
	fmt.Fprintf(&g.b, "policy \"diff-fn-%d\"\n\nschema {\n", seed)
	g.writeSchema(1)
	g.b.WriteString("}\n\n")
	if g.r.IntN(2) == 0 {
		g.layoutFuncs()
	}
	for i := range 1 + g.r.IntN(3) {
		g.function(i + 1)
	}
	g.locals = [][]local{nil}
	for range 3 + g.r.IntN(8) {
		g.stmt(0, true)
	}
	return g.b.String()
}

// function writes fn fI: a let, an if that returns, a return, over its
// parameters only (the schema's fields are hidden while it is written),
// and may call the functions before it. The expressions are the
// generator's, which read the record here and there: a body that does
// not check alone (impure, or mistyped) is drawn again, up to maxTries
// times, and the function left out after that.
func (g *Gen) function(i int) {
	const maxTries = 40
	fn := genFn{name: "f" + strconv.Itoa(i), a: g.pick(fnTypes...), b: g.pick(fnTypes...), result: g.pick(fnTypes...)}
	fields, locals, prefix := g.fields, g.locals, g.b.String()
	g.fields = nil
	defer func() { g.fields, g.locals = fields, locals }()
	for range maxTries {
		g.b.Reset()
		g.b.WriteString(prefix)
		g.locals = [][]local{{{"p", fn.a}, {"q", fn.b}}}
		lt := g.pick(fnTypes...)
		fmt.Fprintf(&g.b, "fn %s(p: %s, q: %s) %s {\n", fn.name, fn.a, fn.b, fn.result)
		g.line(1, "let l = %s", g.expr(lt, 1))
		g.locals[0] = append(g.locals[0], local{"l", lt})
		g.line(1, "if %s {", g.expr("bool", 1))
		g.line(2, "return %s", g.expr(fn.result, 1))
		g.line(1, "}")
		g.line(1, "return %s", g.expr(fn.result, 1))
		g.b.WriteString("}\n\n")
		text := g.b.String()[len(prefix):]
		if checks("policy \"f\"\n\n" + g.fnText + text) {
			g.fnText += text
			g.fns = append(g.fns, fn)
			return
		}
	}
	g.b.Reset()
	g.b.WriteString(prefix)
}

// checks reports whether src parses and checks without errors.
func checks(src string) bool {
	f, errs := policy.ParseFile("fn.policy", []byte(src))
	if len(errs) > 0 {
		return false
	}
	_, ds := check.Check(f)
	return !ds.HasErrors()
}

// call returns a call of one of the functions whose result is t, with
// random arguments, or "" when none has that result.
func (g *Gen) call(t string, d int) string {
	var fits []genFn
	for _, fn := range g.fns {
		if fn.result == t {
			fits = append(fits, fn)
		}
	}
	if len(fits) == 0 {
		return ""
	}
	fn := fits[g.r.IntN(len(fits))]
	if fn.args != nil {
		return fn.name + "(" + fn.args(d) + ")"
	}
	return fmt.Sprintf("%s(%s, %s)", fn.name, g.expr(fn.a, d), g.expr(fn.b, d))
}

// layoutFuncs writes fn z1, whose zone, unit and format are parameters,
// and fn z2, which passes its zone on to z1: each call gives constants
// the generator draws (the layout is a value, drawn as any string), which
// the VM's inlined body reads as it would literals and the Lua function
// gets as its arguments.
func (g *Gen) layoutFuncs() {
	text := `fn z1(n: int, unit: string, layout: string, tz: string, f: string) string {
  return format(f, format_time(from_unix(n, unit), layout, tz), n)
}

fn z2(n: int, tz: string) string {
  return z1(n, "ms", "%F %T.%L %z", tz, "%s|%d")
}

`
	g.b.WriteString(text)
	g.fnText += text
	zone := func() string {
		return g.pick(`"UTC"`, `"Europe/Paris"`, `"America/New_York"`, `"Asia/Kolkata"`, `"Australia/Lord_Howe"`)
	}
	z1 := func(d int) string {
		layout := g.layout()
		if g.r.IntN(3) == 0 {
			layout = g.expr("string", d)
		}
		return strings.Join([]string{g.expr("int", d), g.pick(`"s"`, `"ms"`, `"us"`, `"ns"`), layout, zone(),
			g.pick(`"%s|%d"`, `"%-30s %x"`, `"%q %v"`, `"at %s (%05d)"`)}, ", ")
	}
	z2 := func(d int) string { return g.expr("int", d) + ", " + zone() }
	g.fns = append(g.fns, genFn{name: "z1", result: "string", args: z1}, genFn{name: "z2", result: "string", args: z2})
}
