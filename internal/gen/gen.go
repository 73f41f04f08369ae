// Package gen generates the deterministic benchmark data of B1 (described
// in docs/pipeline-tail.md, "policyrun gen"): flat JSON log lines,
// Kubernetes records and CRI container lines.
package gen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// Kinds lists the generators by name.
var Kinds = []string{"flat", "k8s", "cri"}

// Epoch is the timestamp of the first record; each record is about a
// millisecond after the one before.
var Epoch = time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)

// A Generator produces the records of one kind. The same kind and seed give
// the same bytes, on every platform and Go version that keeps math/rand/v2's
// PCG stable (the Go 1 compatibility promise covers it).
type Generator struct {
	kind    string
	rng     *rand.Rand
	now     time.Time
	pods    []pod
	scratch []byte // the request path of a flat record
	msg     []byte // a flat record inside a k8s or CRI line

	// The remaining parts of a CRI message split over P lines.
	pending       [][]byte
	next          int // index of the next part in pending
	pendingStream string
}

// New returns a Generator of kind ("flat", "k8s" or "cri") for seed.
func New(kind string, seed uint64) (*Generator, error) {
	g := &Generator{
		kind: kind,
		rng:  rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		now:  Epoch,
	}
	switch kind {
	case "flat", "cri":
	case "k8s":
		g.pods = makePods(g.rng, 64)
	default:
		return nil, fmt.Errorf("gen: unknown kind %q (known: flat, k8s, cri)", kind)
	}
	return g, nil
}

// Append appends the next line, with its newline, to dst.
func (g *Generator) Append(dst []byte) []byte {
	g.now = g.now.Add(time.Duration(500_000 + g.rng.IntN(1_000_000)))
	switch g.kind {
	case "flat":
		return append(g.appendFlat(dst), '\n')
	case "k8s":
		return append(g.appendK8s(dst), '\n')
	default:
		return g.appendCRI(dst)
	}
}

// Write writes n lines of kind for seed to w.
func Write(w io.Writer, kind string, n int, seed uint64) error {
	g, err := New(kind, seed)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var line []byte
	for range n {
		line = g.Append(line[:0])
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

var (
	levels   = []string{"debug", "info", "info", "info", "info", "info", "warn", "error"}
	methods  = []string{"GET", "GET", "GET", "POST", "PUT", "DELETE", "PATCH"}
	statuses = []int{200, 200, 200, 200, 201, 204, 301, 304, 400, 401, 403, 404, 429, 500, 502, 503}
	routes   = []string{"/api/v1/users/", "/api/v1/orders/", "/api/v2/cart/", "/health/", "/api/v1/search?q=", "/static/js/", "/api/v1/payments/"}
	services = []string{"checkout", "cart", "frontend", "payments", "search", "auth", "inventory", "shipping"}
	verbs    = []string{"request completed", "request completed", "request completed", "served from cache", "retried once", "upstream timed out", "rejected: \"rate limit\"", "ok, café"}
)

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// appendTime appends t as RFC 3339 with exactly digits fraction digits,
// so that lines of one kind have the same shape.
func appendTime(dst []byte, t time.Time, digits int) []byte {
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05.")
	frac := t.Nanosecond()
	for range 9 - digits {
		frac /= 10
	}
	start := len(dst)
	for range digits {
		dst = append(dst, '0')
	}
	for i := len(dst) - 1; i >= start; i-- {
		dst[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(dst, 'Z')
}

func appendHex(dst []byte, r *rand.Rand, n int) []byte {
	const digits = "0123456789abcdef"
	for i := 0; i < n; i += 16 {
		v := r.Uint64()
		for j := 0; j < 16 && i+j < n; j++ {
			dst = append(dst, digits[v&15])
			v >>= 4
		}
	}
	return dst
}

// appendFlat appends one flat JSON record of about 256 bytes: time, level,
// msg, user, path, method, status, latency_ms, bytes, service, trace_id.
func (g *Generator) appendFlat(dst []byte) []byte {
	r := g.rng
	method, status := pick(r, methods), pick(r, statuses)
	path := append(g.scratch[:0], pick(r, routes)...)
	path = strconv.AppendInt(path, int64(r.IntN(100000)), 10)
	g.scratch = path
	dst = append(dst, `{"time":"`...)
	dst = appendTime(dst, g.now, 3)
	dst = append(dst, `","level":"`...)
	dst = append(dst, pick(r, levels)...)
	dst = append(dst, `","msg":"`...)
	dst = appendJSONText(dst, pick(r, verbs))
	dst = append(dst, `","user":"user-`...)
	dst = strconv.AppendInt(dst, int64(r.IntN(5000)), 10)
	dst = append(dst, `","path":"`...)
	dst = append(dst, path...)
	dst = append(dst, `","method":"`...)
	dst = append(dst, method...)
	dst = append(dst, `","status":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, `,"latency_ms":`...)
	dst = strconv.AppendFloat(dst, float64(r.IntN(2_000_000))/1000, 'f', 3, 64)
	dst = append(dst, `,"bytes":`...)
	dst = strconv.AppendInt(dst, int64(r.IntN(1<<20)), 10)
	dst = append(dst, `,"service":"`...)
	dst = append(dst, pick(r, services)...)
	dst = append(dst, `","trace_id":"`...)
	dst = appendHex(dst, r, 32)
	dst = append(dst, `"}`...)
	return dst
}

// appendJSONText appends s, escaping what JSON requires (the texts here
// hold quotes but nothing below U+0020).
func appendJSONText[T string | []byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			dst = append(dst, '\\')
		}
		dst = append(dst, s[i])
	}
	return dst
}
