package difftest

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// OTLPRecord returns a random OTLP record for seed, as its view in JSON
// (record.Arena.DecodeOTLPView), for an OTLP policy whose body has type
// body (OTLPBody). The attributes are the fields of schema, as Record
// makes them (matching or breaking it); the resource's attributes and the
// body usually match the policy's refinements and sometimes break them;
// the fixed keys always hold their types (or null, or are left out: their
// defaults), since a view that does not is no OTLP record.
func OTLPRecord(seed uint64, body string) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x94d049bb133111eb))
	return view(r, body, resourceJSON(r), scopeJSON(r))
}

// OTLPGroup returns n records as OTLPRecord makes them that share one or
// two resources and scopes: encoded as one request and decoded again, the
// records of a resource and scope share their maps.
func OTLPGroup(seed uint64, body string, n int) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed^0xbf58476d1ce4e5b9))
	res := make([]string, 1+r.IntN(2))
	for i := range res {
		res[i] = resourceJSON(r)
	}
	scopes := make([]string, 1+r.IntN(2))
	for i := range scopes {
		scopes[i] = scopeJSON(r)
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = view(r, body, res[r.IntN(len(res))], scopes[r.IntN(len(scopes))])
	}
	return out
}

// jsonObject writes a JSON object of members.
type jsonObject struct {
	b strings.Builder
	n int
}

func (o *jsonObject) add(k, v string) {
	if o.n == 0 {
		o.b.WriteByte('{')
	} else {
		o.b.WriteByte(',')
	}
	o.n++
	o.b.WriteString(strconv.Quote(k))
	o.b.WriteByte(':')
	o.b.WriteString(v)
}

func (o *jsonObject) String() string {
	if o.n == 0 {
		return "{}"
	}
	return o.b.String() + "}"
}

func oneOf(r *rand.Rand, list ...string) string { return list[r.IntN(len(list))] }

func hexDigits(r *rand.Rand, n int, upper bool) string {
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return strconv.Quote(string(b))
}

// view writes one record's view, its members in a random order now and
// then (the decoder puts them in the view's order).
func view(r *rand.Rand, body, res, scope string) []byte {
	type kv struct{ k, v string }
	var kvs []kv
	add := func(k, v string) { kvs = append(kvs, kv{k, v}) }
	// fixed adds a fixed key, or leaves it out, or sets it to null.
	fixed := func(k string, v func() string) {
		switch r.IntN(12) {
		case 0:
		case 1:
			add(k, "null")
		default:
			add(k, v())
		}
	}
	if v, ok := bodyJSON(r, body); ok {
		add("body", v)
	}
	var attrs strings.Builder
	object(r, &attrs)
	a := attrs.String()
	if r.IntN(3) == 0 {
		// A key that is no identifier.
		kv := `"http.method":` + oneOf(r, `"GET"`, `"POST"`, "200")
		if a == "{}" {
			a = "{" + kv + "}"
		} else {
			a = a[:len(a)-1] + "," + kv + "}"
		}
	}
	if r.IntN(40) != 0 {
		add("attributes", a)
	}
	fixed("severity_text", func() string {
		if r.IntN(4) == 0 {
			return value(r, "string", 0)
		}
		return oneOf(r, `""`, `"INFO"`, `"WARN"`, `"ERROR"`, `"debug"`, `"Information"`)
	})
	fixed("severity_number", func() string {
		if r.IntN(8) == 0 {
			return oneOf(r, "-3", "100", "70000", "2147483647")
		}
		return strconv.Itoa(r.IntN(25))
	})
	fixed("observed_time", func() string {
		return oneOf(r, `"2026-01-01T00:00:00Z"`, `"2025-12-31T23:59:59.123456789Z"`, `"2026-01-01T01:30:00.5+01:00"`,
			"1767225600000000000", "1767225600123456789", "0", `"1999-12-31T23:59:59Z"`)
	})
	fixed("trace_id", func() string {
		if r.IntN(4) == 0 {
			return `""`
		}
		return hexDigits(r, 32, r.IntN(4) == 0)
	})
	fixed("span_id", func() string {
		if r.IntN(4) == 0 {
			return `""`
		}
		return hexDigits(r, 16, r.IntN(4) == 0)
	})
	fixed("flags", func() string { return oneOf(r, "0", "1", "257", strconv.Itoa(r.IntN(1<<31))) })
	fixed("event_name", func() string {
		if r.IntN(4) == 0 {
			return value(r, "string", 0)
		}
		return oneOf(r, `""`, `"login"`, `"db.query"`)
	})
	fixed("dropped_attributes_count", func() string { return strconv.Itoa(r.IntN(4)) })
	if res != "" {
		add("resource", res)
	}
	if scope != "" {
		add("scope", scope)
	}
	switch r.IntN(6) {
	case 0:
		add("time", oneOf(r, `"2026-01-01T00:00:01Z"`, "1767225601000000000", "0", "null", `"2026-01-01T00:00:00.000000001Z"`))
	case 1:
		add("time", `"2026-01-01T00:00:00Z"`)
	}
	if r.IntN(4) == 0 {
		r.Shuffle(len(kvs), func(i, j int) { kvs[i], kvs[j] = kvs[j], kvs[i] })
	}
	var o jsonObject
	for _, kv := range kvs {
		o.add(kv.k, kv.v)
	}
	return []byte(o.String())
}

// bodyJSON returns a body for a policy whose body has type body: usually
// of that type, now and then absent, null or of another kind.
func bodyJSON(r *rand.Rand, body string) (string, bool) {
	switch x := r.IntN(24); {
	case x == 0:
		return "", false
	case x == 1:
		return "null", true
	case x == 2:
		return value(r, oneOf(r, "int", "float", "string", "bool", "array<int>", "map<string>"), 0), true
	}
	switch body {
	case "string", "string?":
		return value(r, "string", 0), true
	case "map<string>":
		return value(r, "map<string>", 0), true
	case "object":
		var o jsonObject
		if r.IntN(4) != 0 {
			o.add("msg", value(r, "string", 0))
		}
		switch r.IntN(6) {
		case 0:
		case 1:
			o.add("code", "null")
		case 2:
			o.add("code", `"500"`)
		default:
			o.add("code", value(r, "int", 0))
		}
		if r.IntN(3) == 0 {
			o.add("extra", value(r, "any", 0))
		}
		return o.String(), true
	}
	if r.IntN(4) == 0 {
		return `{"k":` + value(r, "string", 0) + `,"n":{"deep":[1,"two",null,{"x":1.5}]}}`, true
	}
	return value(r, "any", 0), true
}

// resourceJSON returns a resource: its attributes mostly as the policies
// refine them, or "" for none (the defaults).
func resourceJSON(r *rand.Rand) string {
	if r.IntN(20) == 0 {
		return ""
	}
	var at jsonObject
	switch x := r.IntN(25); {
	case x == 0:
	case x == 1:
		at.add("service.name", "7")
	default:
		at.add("service.name", oneOf(r, `"checkout"`, `"api"`, `""`, `"héllo"`))
	}
	switch r.IntN(4) {
	case 0:
	case 1:
		at.add("host.name", "null")
	default:
		at.add("host.name", value(r, "string", 0))
	}
	if r.IntN(2) == 0 {
		at.add("ri", value(r, "int", 0))
	}
	if r.IntN(20) != 0 {
		at.add("rarr", value(r, "array<string>", 0))
	}
	if r.IntN(2) == 0 {
		at.add("k8s.pod.name", oneOf(r, `"web-1"`, `"web-2"`, `"db-0"`))
	}
	var o jsonObject
	if r.IntN(20) != 0 {
		o.add("attributes", at.String())
	}
	if r.IntN(3) == 0 {
		o.add("dropped_attributes_count", strconv.Itoa(r.IntN(3)))
	}
	if r.IntN(3) == 0 {
		o.add("schema_url", oneOf(r, `"https://opentelemetry.io/schemas/1.24.0"`, `""`))
	}
	return o.String()
}

// scopeJSON returns a scope, or "" for none.
func scopeJSON(r *rand.Rand) string {
	if r.IntN(8) == 0 {
		return ""
	}
	var o jsonObject
	if r.IntN(6) != 0 {
		o.add("name", oneOf(r, `"io.opentelemetry.app"`, `"app"`, `""`, `"a.b"`))
	}
	if r.IntN(3) != 0 {
		o.add("version", oneOf(r, `"1.2.3"`, `""`, `"v2"`))
	}
	if r.IntN(3) != 0 {
		o.add("attributes", value(r, "map<string>", 0))
	}
	if r.IntN(4) == 0 {
		o.add("dropped_attributes_count", strconv.Itoa(r.IntN(3)))
	}
	if r.IntN(4) == 0 {
		o.add("schema_url", `"https://example.com/s"`)
	}
	return o.String()
}
