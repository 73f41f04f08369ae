package difftest

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Record returns a random JSON record for seed: each schema field usually
// holds its declared type, and sometimes is absent, null or of another kind,
// so that faults and absent/null handling are exercised too.
func Record(seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, ^seed))
	var b strings.Builder
	object(r, &b)
	return []byte(b.String())
}

// object writes to b a random JSON object of the fields of schema, as
// Record describes.
func object(r *rand.Rand, b *strings.Builder) {
	b.WriteByte('{')
	n := 0
	add := func(k, v string) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(v)
	}
	// Most records match the schema (optional fields may be absent or
	// null); the others break it in one or two fields.
	broken := map[int]bool{}
	if r.IntN(10) < 3 {
		broken[r.IntN(len(schema))] = true
		broken[r.IntN(len(schema))] = true
	}
	for i, f := range schema {
		x := 3 + r.IntN(17)
		if broken[i] {
			x = r.IntN(3)
		} else if strings.HasSuffix(f.typ, "?") {
			x = r.IntN(12)
		}
		switch {
		case x == 0:
			continue // absent
		case x == 1:
			add(f.name, "null")
		case x == 2:
			add(f.name, value(r, []string{"int", "float", "string", "bool", "array<int>", "map<string>"}[r.IntN(6)], 0))
		default:
			add(f.name, value(r, f.typ, 0))
		}
	}
	if r.IntN(2) == 0 {
		add("extra", value(r, []string{"int", "float", "string", "bool", "array<int>", "map<string>", "any"}[r.IntN(7)], 0))
	}
	if r.IntN(4) == 0 {
		add("out1", value(r, "string", 0))
	}
	b.WriteByte('}')
}

var strs = []string{"", "a", "abc", "x,y", "a=1,b=2", "k=12 z=3", "héllo wörld", "  pad  ", "12", "-3", "1.5",
	"true", "false", `{"a":1,"b":[1,2]}`, "[1,2]", "2024-03-05 10:20:30", "GET /healthz", "ÄÖü", "a b=c d=\"e f\"",
	"10/Oct/2023:13:55:36 -0700", "1e3", "null", "k",
	// Edges where the backends once disagreed: logfmt and parse_kv white
	// space, strconv's extra float syntax, times outside int64 nanoseconds.
	"a=1\tb=2\r\n", "a=1, ,b=2", "1_0", "0x1p-2", "0001-01-01 00:00:00", "2262-04-12 00:00:00"}

func value(r *rand.Rand, typ string, d int) string {
	typ = strings.TrimSuffix(typ, "?")
	switch typ {
	case "int":
		if r.IntN(4) == 0 {
			return strconv.Itoa(r.IntN(200000) - 100000)
		}
		return strconv.Itoa(r.IntN(41) - 20)
	case "float":
		return []string{"1.5", "-2.25", "0.0", "3.0", "1e-7", "123.456", "7", "-0.5", "1e20"}[r.IntN(9)]
	case "string":
		return strconv.Quote(strs[r.IntN(len(strs))])
	case "bool":
		return []string{"true", "false"}[r.IntN(2)]
	case "array<int>":
		var parts []string
		for range r.IntN(4) {
			if r.IntN(15) == 0 {
				parts = append(parts, `"x"`)
				continue
			}
			parts = append(parts, value(r, "int", d+1))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case "array<string>":
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, value(r, "string", d+1))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case "map<string>":
		var parts []string
		for i, k := range []string{"a", "k", "b", "z", "ключ"} {
			if r.IntN(2) == 0 {
				continue
			}
			v := value(r, "string", d+1)
			if r.IntN(15) == 0 {
				v = strconv.Itoa(i)
			}
			parts = append(parts, strconv.Quote(k)+":"+v)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case "{x: int, y: string?}":
		switch r.IntN(4) {
		case 0:
			return `{"x":` + value(r, "int", d+1) + `}`
		case 1:
			return `{"y":` + value(r, "string", d+1) + `,"x":` + value(r, "int", d+1) + `,"w":true}`
		default:
			return `{"x":` + value(r, "int", d+1) + `,"y":` + value(r, "string", d+1) + `}`
		}
	}
	if d > 1 {
		return "null"
	}
	return value(r, []string{"int", "float", "string", "bool", "array<int>", "map<string>"}[r.IntN(6)], d+1)
}
