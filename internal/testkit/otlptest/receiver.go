// Package otlptest is a receiver for tests of the pipeline's network
// outputs and of whole runs: an OTLP/HTTP (protobuf or JSON) or NDJSON
// endpoint that counts the records it gets by a number in each, and can be
// told to misbehave.
package otlptest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/policyrun/policyrun/record"
)

// Receiver counts records by their number: an OTLP record's body.<Key>, an
// NDJSON line's <Key>. Refuse, when set, is called first with the
// request's number (1 for the first) and answers it instead when it
// returns true; Answer writes the success answer (200, empty, by default).
type Receiver struct {
	T   testing.TB
	Key string // "n" when empty

	Refuse func(w http.ResponseWriter, r *http.Request, n int64) bool
	Answer func(w http.ResponseWriter)

	Requests atomic.Int64

	mu      sync.Mutex
	got     map[int64]int
	headers http.Header
}

// New returns a receiver that fails t on requests it cannot read.
func New(t testing.TB) *Receiver { return &Receiver{T: t, got: map[int64]int{}} }

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := rc.Requests.Add(1)
	if rc.Refuse != nil && rc.Refuse(w, r, n) {
		return
	}
	var body io.Reader = r.Body
	switch r.Header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	case "zstd":
		zr, err := zstd.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		defer zr.Close()
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	key := rc.Key
	if key == "" {
		key = "n"
	}
	ns, err := Numbers(r.Header.Get("Content-Type"), data, key)
	if err != nil {
		rc.T.Errorf("receiver: %v", err)
		http.Error(w, err.Error(), 400)
		return
	}
	rc.mu.Lock()
	for _, n := range ns {
		rc.got[n]++
	}
	rc.headers = r.Header.Clone()
	rc.mu.Unlock()
	if rc.Answer != nil {
		rc.Answer(w)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(200)
}

// Numbers reads the number of each record of a request body.
func Numbers(contentType string, data []byte, key string) ([]int64, error) {
	a := record.NewArena()
	var recs []*record.Record
	var err error
	switch contentType {
	case "application/x-protobuf":
		recs, err = a.DecodeOTLP(data, record.Owned, nil)
	case "application/json":
		recs, err = a.DecodeOTLPJSON(data, record.Owned, nil)
	case "application/x-ndjson":
		var ns []int64
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var v map[string]any
			d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				return nil, err
			}
			num, _ := v[key].(json.Number)
			n, err := num.Int64()
			if err != nil {
				return nil, fmt.Errorf("line %q: %s: %v", sc.Text(), key, err)
			}
			ns = append(ns, n)
		}
		return ns, nil
	default:
		return nil, fmt.Errorf("content type %q", contentType)
	}
	if err != nil {
		return nil, err
	}
	ns := make([]int64, len(recs))
	for i, r := range recs {
		v, ok := r.Get(record.NewPath("body", key))
		if !ok {
			return nil, fmt.Errorf("record %d has no body.%s", i, key)
		}
		ns[i] = v.Int()
	}
	return ns, nil
}

// Each checks that records [0, n) arrived, each at least once, and
// returns how many arrived more than once.
func (rc *Receiver) Each(t testing.TB, n int) (dups int) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	missing := 0
	for i := range int64(n) {
		switch c := rc.got[i]; {
		case c == 0:
			missing++
		case c > 1:
			dups += c - 1
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d records did not arrive", missing, n)
	}
	return dups
}

// Has says whether record n arrived.
func (rc *Receiver) Has(n int64) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[n] > 0
}

// Count is how many distinct records arrived.
func (rc *Receiver) Count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

// Total is how many records arrived, duplicates included.
func (rc *Receiver) Total() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, c := range rc.got {
		n += c
	}
	return n
}

// Header is a header of the last request that got through.
func (rc *Receiver) Header(name string) string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.headers.Get(name)
}

// Histogram counts the records that arrived k times, by k.
func (rc *Receiver) Histogram() map[int]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	h := map[int]int{}
	for _, c := range rc.got {
		h[c]++
	}
	return h
}
