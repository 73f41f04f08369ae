package record

import (
	"strconv"
	"strings"
)

// b2JSON is the fixed record of benchmark B2 (docs/records.md, "Benchmarks
// (B2, B3)"): 12 top-level
// fields, the last a nested map of 5; 359 bytes as one JSON line.
//
//	level      string   "info"
//	msg        string   30 bytes
//	user       string
//	path       string
//	method     string
//	status     int
//	latency_ms float
//	bytes      int
//	trace_id   string   32 hex digits
//	span_id    string   16 hex digits
//	host       string
//	http       map      proto string, remote string, user_agent string,
//	                    tls bool, port int
const b2JSON = `{"level":"info","msg":"GET /api/v1/orders completed","user":"alice@example.com",` +
	`"path":"/api/v1/orders/12345","method":"GET","status":200,"latency_ms":12.5,"bytes":5123,` +
	`"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","host":"web-7f9c",` +
	`"http":{"proto":"HTTP/1.1","remote":"10.0.3.17","user_agent":"curl/8.5.0","tls":true,"port":443}}`

// fieldsJSON returns a flat record of n fields for benchmark B3: field
// names as a real wide record has them (different words, lengths 5 to 20),
// values cycling string, int, float, bool, and a longer string.
func fieldsJSON(n int) string {
	words := []string{"service", "host", "level", "region", "zone", "pod", "namespace", "container",
		"image", "node", "cluster", "request", "user", "session", "trace", "span"}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		name := words[i%len(words)] + "_" + words[(i/len(words)+3*i)%len(words)]
		if i >= len(words) {
			name += "_" + strconv.Itoa(i)
		}
		b.WriteString(strconv.Quote(name))
		b.WriteByte(':')
		switch i % 5 {
		case 0:
			b.WriteString(`"value-` + strconv.Itoa(i) + `"`)
		case 1:
			b.WriteString(strconv.Itoa(i * 1000))
		case 2:
			b.WriteString(strconv.Itoa(i) + ".25")
		case 3:
			b.WriteString("true")
		case 4:
			b.WriteString(`"a somewhat longer value for field ` + strconv.Itoa(i) + `"`)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// flatJSON are two records of the shape policyrun gen flat writes (the
// pipeline benchmark B1's input), about 256 bytes each.
var flatJSON = [2]string{
	`{"time":"2026-11-29T21:00:00.001Z","level":"warn","msg":"request completed","user":"user-3282",` +
		`"path":"/api/v1/orders/91382","method":"GET","status":200,"latency_ms":1810.542,"bytes":113650,` +
		`"service":"frontend","trace_id":"a9c5755aaab315890e672cee03b52e0b"}`,
	`{"time":"2026-11-29T21:00:00.002Z","level":"info","msg":"rejected: \"rate limit\"","user":"user-670",` +
		`"path":"/health/36460","method":"POST","status":503,"latency_ms":631.996,"bytes":856721,` +
		`"service":"frontend","trace_id":"6059c8e621f385276bca65a6b9ee2654"}`,
}
