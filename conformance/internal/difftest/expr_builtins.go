package difftest

import (
	"strconv"
	"strings"
)

// exprA returns, about one time in four, an expression of type t that calls
// a built-in of docs/language.md's first groups, with well-typed arguments (ok is
// false otherwise, and expr goes on as before). d is the depth already
// reached.
func (g *Gen) exprA(t string, d int) (string, bool) {
	if g.r.IntN(4) != 0 {
		return "", false
	}
	switch t {
	case "int":
		switch g.r.IntN(7) {
		case 0:
			return "(unix_seconds(" + g.timeExprA(d) + ") % 100000)", true
		case 1:
			return "(unix_millis(" + g.timeExprA(d) + ") % 1000000)", true
		case 2:
			return "((parse_duration(" + g.durExpr(d) + ") ?? 7) / 1000)", true
		case 3:
			return "len(" + g.mapExpr(d) + ")", true
		case 4:
			if g.r.IntN(2) == 0 {
				return "severity_number(" + g.pick(g.expr("string", d), `"WARN"`, `"info"`, `"E"`, `"Critical"`) + ")", true
			}
			return "index_of(" + g.expr("string", d) + ", " + g.expr("string", d) + ")", true
		case 5:
			switch g.r.IntN(3) {
			case 0:
				// Clamped: a float beyond 2^53 floors to an int the backends
				// need not agree on.
				return g.pick("floor", "ceil") + "(max(min(" + g.expr(g.pick("int", "float"), d) + ", 1000000.0), -1000000.0))", true
			case 1:
				return "abs(" + g.expr("int", d) + ")", true
			default:
				return g.pick("min", "max") + "(" + g.expr("int", d) + ", " + g.expr("int", d) + ")", true
			}
		default:
			return "len(values(" + g.mapExpr(d) + "))", true
		}
	case "float":
		switch g.r.IntN(3) {
		case 0:
			return "round(" + g.expr(g.pick("int", "float"), d) + g.pick("", ", 0", ", 1", ", 2", ", -1", ", 3") + ")", true
		case 1:
			return "abs(" + g.expr("float", d) + ")", true
		default:
			return g.pick("min", "max") + "(" + g.expr(g.pick("int", "float"), d) + ", " + g.expr("float", d) + ")", true
		}
	case "string":
		switch g.r.IntN(6) {
		case 0:
			return "format_time(" + g.timeExprA(d) + ", " + g.layout() + g.zoneArg() + ")", true
		case 1:
			return "truncate(" + g.expr("string", d) + ", " + g.expr("int", d) + ")", true
		case 2:
			return g.pick("trim_prefix", "trim_suffix") + "(" + g.expr("string", d) + ", " + g.expr("string", d) + ")", true
		case 3:
			return g.pick("uuid_v4()", "uuid_v7()"), true
		default:
			return g.format(d), true
		}
	case "map<string>":
		switch g.r.IntN(4) {
		case 0:
			return "merge(" + g.expr("map<string>", d) + ", " + g.expr("map<string>", d) + ")", true
		case 1:
			return g.pick("keep_keys", "drop_keys") + "(" + g.expr("map<string>", d) + ", " + g.pick("`^k`", "`a|z`", "`^$`", "`[0-9]`") + ")", true
		default:
			return "flatten(" + g.expr("map<string>", d) + g.pick("", `, "_"`, `, ""`) + ")", true
		}
	case "array<string>":
		switch g.r.IntN(5) {
		case 0:
			return "values(" + g.expr("map<string>", d) + ")", true
		case 1:
			return "(" + g.expr("array<string>", d) + " + " + g.expr("array<string>", d) + ")", true
		case 2:
			return "append(" + g.expr("array<string>", d) + ", " + g.expr("string", d) + ")", true
		case 3:
			return "unique(" + g.expr("array<string>", d) + ")", true
		default:
			return "slice(" + g.expr("array<string>", d) + ", " + g.expr("int", d) + ", " + g.expr("int", d) + ")", true
		}
	case "bool":
		switch g.r.IntN(3) {
		case 0:
			return "includes(" + g.expr("array<string>", d) + ", " + g.expr("string", d) + ")", true
		case 1:
			return "includes(" + g.p(".arr") + ", " + g.expr(g.pick("int", "float"), d) + ")", true
		default:
			return "includes(unique(as_array(" + g.expr("any", d) + ") ?? []), " + g.expr("any", d) + ")", true
		}
	case "any":
		switch g.r.IntN(3) {
		case 0:
			return "unique(" + g.p(".arr") + " + " + g.pick("[1, 2]", "[]", g.p(".arr"), "[-3, 0]") + ")", true
		case 1:
			return "unique(" + g.pick("[1, 1.0, 2]", `["a", "a", null, null]`, `[{"a": 1}, {"a": 1.0}, [1], [1]]`) + ")", true
		}
		return g.mapExpr(d), true
	}
	return "", false
}

// mapExpr is an expression of a map or object type, often nested.
func (g *Gen) mapExpr(d int) string {
	switch g.r.IntN(6) {
	case 0:
		return "unflatten(" + g.expr("map<string>", d) + g.pick("", `, "="`, `, ","`) + ")"
	case 1:
		return "merge(" + g.p(".o") + ", " + g.pick(`{"x": 1}`, `{"z": "w"}`, `{}`, g.p(".o"), `{"y": null}`) + ")"
	case 2:
		return "flatten(as_map(" + g.expr("any", d) + ") ?? {" + `"n": {"a": 1, "b": {"c": [1]}}, "e": {}` + "}" + g.pick("", `, "/"`) + ")"
	case 3:
		return "unflatten(flatten(as_map(" + g.expr("any", d) + ") ?? {}))"
	case 4:
		return "keep_keys(" + g.p(".o") + ", " + g.pick("`x`", "`y`", "`.`") + ")"
	default:
		return "merge(as_map(" + g.expr("any", d) + ") ?? {}, " + g.expr("map<string>", d) + ")"
	}
}

// timeExprA is an expression of type timestamp.
func (g *Gen) timeExprA(d int) string {
	switch g.r.IntN(6) {
	case 0:
		return g.pick("%time", "now()")
	case 1:
		return "(parse_time(" + g.expr("string", d) + ", " + g.layout() + g.zoneArg() + ") ?? now())"
	case 2:
		return "(parse_time(" + g.p(".s") + `, "%Y-%m-%d %H:%M:%S"` + g.zoneArg() + ") ?? %time)"
	case 3:
		return "from_unix(" + g.expr("int", d) + g.pick("", `, "s"`, `, "ms"`, `, "us"`, `, "ns"`) + ")"
	case 4:
		return "from_unix(" + g.expr("float", d) + g.pick("", `, "s"`, `, "ms"`) + ")"
	default:
		return "from_unix(" + strconv.Itoa(g.r.IntN(4_000_000_000)-1_000_000_000) + ")"
	}
}

// durExpr is a string expression that is sometimes a Go duration.
func (g *Gen) durExpr(d int) string {
	if g.r.IntN(3) == 0 {
		return g.expr("string", d)
	}
	return strconv.Quote(g.pick("300ms", "1h", "-1.5s", "5", "", "2h45m", "1h1m1s1ms1us1ns", "5µs", "0", "1d", ".5s"))
}

func (g *Gen) layout() string {
	return g.pick(`"%Y-%m-%d %H:%M:%S"`, `"%Y-%m-%dT%H:%M:%S%z"`, `"%d/%b/%Y:%H:%M:%S %Z"`, `"%s"`, `"%j %A %I%p %e"`, `"%F %T.%L"`)
}

// zoneArg is "" (UTC by default) or the constant zone argument, with its
// comma.
func (g *Gen) zoneArg() string {
	return g.pick("", `, "UTC"`, `, "Europe/Paris"`, `, "America/New_York"`, `, "Asia/Kolkata"`, `, "Australia/Lord_Howe"`)
}

// format is a call of format with one to three well-typed verbs.
func (g *Gen) format(d int) string {
	var f strings.Builder
	var args []string
	f.WriteString(g.pick("", "at ", "x=", "日本 "))
	for range 1 + g.r.IntN(3) {
		flags := g.pick("", "", "-", "0", "+", " ", "-0")
		width := g.pick("", "", "3", "8")
		switch g.r.IntN(7) {
		case 0:
			f.WriteString("%" + strings.Trim(flags, "0+ ") + width + "s")
			args = append(args, g.expr("string", d))
		case 1:
			f.WriteString("%" + flags + width + "d")
			args = append(args, g.expr("int", d))
		case 2:
			f.WriteString("%" + flags + width + g.pick("", ".0", ".2", ".5") + "f")
			args = append(args, g.expr(g.pick("int", "float"), d))
		case 3:
			f.WriteString("%" + strings.Trim(flags, "+ ") + width + "x")
			args = append(args, g.expr(g.pick("int", "string"), d))
		case 4:
			f.WriteString("%" + strings.Trim(flags, "0+ ") + width + "q")
			args = append(args, g.expr("string", d))
		default:
			f.WriteString("%" + strings.Trim(flags, "0+ ") + width + "v")
			args = append(args, g.expr(g.pick("int", "float", "string", "bool", "map<string>", "array<string>", "any"), d))
		}
		f.WriteString(g.pick(" ", "|", "%%", ""))
	}
	return "format(" + strconv.Quote(f.String()) + ", " + strings.Join(args, ", ") + ")"
}
