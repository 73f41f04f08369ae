package difftest

import (
	"fmt"
	"strconv"
	"strings"
)

// maxDepth bounds expression nesting; ints stay far below 2^53, where the
// backends are held to agree.
const maxDepth = 3

func (g *Gen) strLit() string {
	return strconv.Quote(g.pick("", "a", "k", "x,y", "a=1,b=2", "héllo", "  pad  ", "ÄÖü", "12", "-3", "1.5", "true", `{"a":1}`, "a b=c", "2024-03-05 10:20:30", "GET /healthz"))
}

// expr returns an expression of type t ("int", "float", "string", "bool",
// "any", "map<string>", "array<string>").
func (g *Gen) expr(t string, d int) string {
	if len(g.fns) > 0 && d < maxDepth && g.r.IntN(3) == 0 {
		if c := g.call(t, d+1); c != "" {
			return c
		}
	}
	leaf := d >= maxDepth || g.r.IntN(3) == 0
	if leaf {
		return g.leaf(t)
	}
	d++
	if g.otlp && g.r.IntN(5) == 0 {
		if x := g.otlpExpr(t, d); x != "" {
			return x
		}
	}
	if g.r.IntN(8) == 0 {
		if e := g.exprB(t, d); e != "" {
			return e
		}
	}
	if s, ok := g.exprA(t, d); ok {
		return s
	}
	switch t {
	case "int":
		switch g.r.IntN(13) {
		case 0:
			if g.r.IntN(3) == 0 {
				// A small literal factor keeps products far below 2^53.
				return fmt.Sprintf("(%d * %s)", g.r.IntN(41)-20, g.expr("int", d))
			}
			return fmt.Sprintf("(%s %s %s)", g.expr("int", d), g.pick("+", "-"), g.expr("int", d))
		case 1:
			return fmt.Sprintf("(%s %s %s)", g.expr("int", d), g.pick("/", "%"), g.expr("int", d))
		case 2:
			return "len(" + g.expr("string", d) + ")"
		case 3:
			x, fn := g.expr("any", d), "to_int"
			if g.otlp && strings.HasPrefix(x, "parse_time(") {
				// A time's nanoseconds (about 1.7e18) in arithmetic go
				// beyond 2^53, where the backends are not held to agree.
				// (Plain policies keep their output of old.)
				fn = "as_int"
			}
			return "(" + fn + "(" + x + ") ?? " + g.leaf("int") + ")"
		case 4:
			return "(hash64(" + g.expr("string", d) + ") % 100)"
		case 5:
			return "-(" + g.leaf("int") + ")"
		case 6:
			return "len(" + g.expr("array<string>", d) + ")"
		case 7:
			return "(" + g.p(".arr") + "[" + strconv.Itoa(g.r.IntN(5)-2) + "] ?? 7)"
		case 8:
			return "coalesce(" + g.p(".i2") + ", " + g.leaf("int") + ")"
		case 9:
			return "(as_int(" + g.expr("any", d) + ") ?? 0)"
		case 10:
			return "len(" + g.pick("as_map", "as_array") + "(" + g.expr("any", d) + ") ?? " + g.pick("{}", "[]") + ")"
		case 11:
			// Whole seconds of a time: exact in a float64, unlike its
			// nanoseconds since 1970 (about 1.8e18).
			return "(unix_nanos(" + g.timeExpr() + ") / 1000000000 % 1000)"
		default:
			return "len(" + g.expr("map<string>", d) + ")"
		}
	case "float":
		switch g.r.IntN(6) {
		case 0:
			return fmt.Sprintf("(%s %s %s)", g.expr("float", d), g.pick("+", "-", "*", "/", "%"), g.expr(g.pick("int", "float"), d))
		case 1:
			return "(to_float(" + g.expr("any", d) + ") ?? " + g.leaf("float") + ")"
		case 2:
			return "(" + g.expr("int", d) + " + 0.5)"
		case 3:
			return "-(" + g.leaf("float") + ")"
		case 4:
			return "(as_float(" + g.expr("any", d) + ") ?? 2.0)"
		default:
			return "(" + g.p(".f2") + " ?? 2)"
		}
	case "string":
		switch g.r.IntN(18) {
		case 0:
			return "(" + g.expr("string", d) + " + " + g.expr("string", d) + ")"
		case 1:
			return g.pick("lower", "upper", "trim") + "(" + g.expr("string", d) + ")"
		case 2:
			return "replace(" + g.expr("string", d) + ", " + g.strLit() + ", " + g.strLit() + ")"
		case 3:
			return "substr(" + g.expr("string", d) + ", " + g.expr("int", d) + ", " + g.expr("int", d) + ")"
		case 4:
			return "join(" + g.expr("array<string>", d) + ", " + g.pick(`"-"`, `""`, `", "`) + ")"
		case 5:
			return "to_string(" + g.expr("any", d) + ")"
		case 6:
			return "replace_re(" + g.expr("string", d) + ", " + g.pick("`[0-9]+`", "`(?P<w>[a-z])`", "`^\\s+|\\s+$`") + ", " + g.pick(`"N"`, `"<$1>"`, `"${w}${w}"`, `""`) + ")"
		case 7:
			return "format_time(" + g.timeExpr() + ", " + g.pick(`"%Y-%m-%dT%H:%M:%S.%LZ"`, `"%d/%b/%Y:%H:%M:%S %z"`, `"%s"`, `"%j %A %I%p %e"`) + ")"
		case 8:
			return "sha256_hex(" + g.expr("string", d) + ")"
		case 9:
			return "type_of(" + g.expr("any", d) + ")"
		case 10:
			return "(" + g.p(".m") + "[" + g.strLit() + "] ?? " + g.strLit() + ")"
		case 11:
			return "(" + g.p(".s2") + " ?? " + g.strLit() + ")"
		case 12:
			return "(" + g.p(".o.y") + " ?? " + g.strLit() + ")"
		case 13:
			return "(" + g.p(".sarr") + "[" + strconv.Itoa(g.r.IntN(4)-2) + "] ?? \"none\")"
		case 14:
			return "%tag"
		case 15:
			return "coalesce(" + g.p(".t") + ", " + g.p(".s2") + ", " + g.strLit() + ")"
		case 16:
			return "(as_string(" + g.expr("any", d) + ") ?? " + g.strLit() + ")"
		default:
			return "(capture(" + g.expr("string", d) + ", `(?P<k>[a-z]+)=(?P<v>[0-9]*)`) ?? {})[\"k\"] ?? \"-\""
		}
	case "bool":
		switch g.r.IntN(14) {
		case 0:
			return fmt.Sprintf("(%s %s %s)", g.expr("bool", d), g.pick("&&", "||"), g.expr("bool", d))
		case 1:
			return "!" + g.leaf("bool")
		case 2:
			nt := g.pick("int", "float", "string")
			return fmt.Sprintf("(%s %s %s)", g.expr(nt, d), g.pick("==", "!=", "<", "<=", ">", ">="), g.expr(nt, d))
		case 3:
			return fmt.Sprintf("(%s %s %s)", g.expr("int", d), g.pick("==", "<"), g.expr("float", d))
		case 4:
			return g.pick("contains", "starts_with", "ends_with") + "(" + g.expr("string", d) + ", " + g.expr("string", d) + ")"
		case 5:
			return "matches(" + g.expr("string", d) + ", " + g.pick("`^[a-z]+$`", "`\\d`", "`(?i)GET`") + ")"
		case 6:
			return "exists(" + g.p(g.pick(".s2", ".i2", ".t", ".o.y", ".m[\"k\"]", ".arr[1]", ".zz", ".out1")) + ")"
		case 7:
			return g.pick("is_string", "is_int", "is_float", "is_bool", "is_null", "is_map", "is_array", "is_timestamp") + "(" + g.expr("any", d) + ")"
		case 8:
			return "(" + g.expr("string", d) + " in [\"a\", \"\", \"x,y\", \"12\"])"
		case 9:
			return "(" + g.expr("int", d) + " in [0, 1, -3, 12])"
		case 10:
			return "(" + g.p(g.pick(".s2", ".i2", ".f2", ".t")) + " == null)"
		case 11:
			return "(" + g.pick("to_bool", "as_bool") + "(" + g.expr("any", d) + ") ?? false)"
		case 12:
			return "(" + g.expr("any", d) + " == " + g.expr("any", d) + ")"
		default:
			return "(now() " + g.pick("==", "<", ">=") + " %time)"
		}
	case "any":
		switch g.r.IntN(6) {
		case 0:
			return "parse_json(" + g.expr("string", d) + ")"
		case 1:
			return g.p(g.pick(".extra", ".s", ".i", ".f", ".m", ".arr", ".b", ".s2", ".o"))
		case 2:
			return "[" + g.expr("int", d) + ", " + g.expr("string", d) + ", null]"
		case 3:
			return `{"a": ` + g.expr("float", d) + `, "b": ` + g.expr("bool", d) + "}"
		case 4:
			return g.expr(g.pick("int", "float", "string", "bool"), d)
		default:
			return "parse_time(" + g.expr("string", d) + ", \"%Y-%m-%d %H:%M:%S\")"
		}
	case "map<string>":
		switch g.r.IntN(4) {
		case 0:
			return "(parse_kv(" + g.expr("string", d) + ", \",\", \"=\") ?? {})"
		case 1:
			return "(parse_logfmt(" + g.expr("string", d) + ") ?? {})"
		case 2:
			return "(capture(" + g.expr("string", d) + ", `(?P<k>[a-z]+)=(?P<v>[0-9]*)`) ?? {})"
		default:
			return `{"k": ` + g.expr("string", d) + `, "z": "1"}`
		}
	case "array<string>":
		switch g.r.IntN(3) {
		case 0:
			return "split(" + g.expr("string", d) + ", " + g.pick(`","`, `""`, `" "`) + ")"
		case 1:
			return "keys(" + g.expr("map<string>", d) + ")"
		default:
			return "[" + g.expr("string", d) + ", " + g.strLit() + "]"
		}
	}
	return g.leaf(t)
}

// leaf returns a literal or a read of a field or local of type t.
func (g *Gen) leaf(t string) string {
	if r := g.readable(t); len(r) > 0 && g.r.IntN(2) == 0 {
		return r[g.r.IntN(len(r))]
	}
	switch t {
	case "int":
		return strconv.Itoa(g.r.IntN(41) - 20)
	case "float":
		return g.pick("1.5", "0.25", "2.0", "1e3", "0.1", "3.0")
	case "string":
		return g.strLit()
	case "bool":
		return g.pick("true", "false")
	case "any":
		x := g.pick(".extra", ".s", "null", "1", "2.5", `"x"`, `{"n": 1}`)
		if x[0] == '.' {
			x = g.p(x)
		}
		return x
	case "map<string>":
		if m := g.p(".m"); g.has(m) && g.r.IntN(2) == 0 {
			return m
		}
		return `{"a": "1"}`
	case "array<string>":
		if sarr := g.p(".sarr"); g.has(sarr) && g.r.IntN(2) == 0 {
			return sarr
		}
		return `["p", "q"]`
	}
	return "null"
}

// timeExpr returns an expression of type timestamp.
func (g *Gen) timeExpr() string {
	parsed := "parse_time(" + g.p(".s") + `, "%Y-%m-%d %H:%M:%S") ?? now()`
	if g.otlp && g.has(".observed_time") {
		return g.pick("%time", "now()", parsed, ".observed_time")
	}
	return g.pick("%time", "now()", parsed)
}
