package gen

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/golden"
)

func generate(t *testing.T, kind string, n int, seed uint64) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, kind, n, seed); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDeterministic(t *testing.T) {
	for _, kind := range Kinds {
		t.Run(kind, func(t *testing.T) {
			a, b := generate(t, kind, 500, 7), generate(t, kind, 500, 7)
			if !bytes.Equal(a, b) {
				t.Fatal("same seed, different output")
			}
			if c := generate(t, kind, 500, 8); bytes.Equal(a, c) {
				t.Fatal("different seeds, same output")
			}
			// A prefix of a longer run is the shorter run.
			if long := generate(t, kind, 800, 7); !bytes.HasPrefix(long, a) {
				t.Fatal("the first 500 lines depend on the count")
			}
		})
	}
}

// TestGolden pins the output of seed 1, so that a change to the
// generators, which changes every benchmark's input, is deliberate: the
// first lines of each kind as text, and a SHA-256 of 2,000 lines.
// go test -run TestGolden -update rewrites the files.
func TestGolden(t *testing.T) {
	var sums strings.Builder
	for _, kind := range Kinds {
		fmt.Fprintf(&sums, "%s %x\n", kind, sha256.Sum256(generate(t, kind, 2000, 1)))
	}
	files := map[string][]byte{"sha256.golden": []byte(sums.String())}
	for _, kind := range Kinds {
		files[kind+".golden"] = generate(t, kind, 20, 1)
	}
	for name, got := range files {
		golden.Check(t, filepath.Join("testdata", name), got)
	}
}

func lines(t *testing.T, data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func TestFlat(t *testing.T) {
	const n = 2000
	ls := lines(t, generate(t, "flat", n, 1))
	if len(ls) != n {
		t.Fatalf("%d lines", len(ls))
	}
	total := 0
	for _, l := range ls {
		total += len(l) + 1
		var rec struct {
			Time, Level, Msg, User, Path, Method, Service string
			TraceID                                       string  `json:"trace_id"`
			Status                                        *int    `json:"status"`
			Latency                                       float64 `json:"latency_ms"`
			Bytes                                         *int    `json:"bytes"`
		}
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if rec.Level == "" || rec.Msg == "" || rec.Status == nil || rec.Bytes == nil || len(rec.TraceID) != 32 {
			t.Fatalf("incomplete record: %s", l)
		}
	}
	if avg := total / n; avg < 230 || avg > 280 {
		t.Errorf("average line is %d bytes, want about 256", avg)
	}
}

func TestK8s(t *testing.T) {
	for _, l := range lines(t, generate(t, "k8s", 500, 3)) {
		var rec struct {
			Log, Stream, Time string
			Kubernetes        struct {
				PodName        string            `json:"pod_name"`
				NamespaceName  string            `json:"namespace_name"`
				PodID          string            `json:"pod_id"`
				Host           string            `json:"host"`
				ContainerName  string            `json:"container_name"`
				ContainerImage string            `json:"container_image"`
				Labels         map[string]string `json:"labels"`
				Annotations    map[string]string `json:"annotations"`
			}
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		k := rec.Kubernetes
		if k.PodName == "" || k.NamespaceName == "" || len(k.PodID) != 36 || k.Host == "" ||
			k.ContainerName == "" || k.ContainerImage == "" || len(k.Labels) != 5 || len(k.Annotations) != 3 {
			t.Fatalf("incomplete kubernetes map: %s", l)
		}
		if !json.Valid([]byte(rec.Log)) || (rec.Stream != "stdout" && rec.Stream != "stderr") {
			t.Fatalf("log or stream: %s", l)
		}
	}
}

var criLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) (stdout|stderr) ([PF]) (.*)$`)

func TestCRI(t *testing.T) {
	var msg strings.Builder
	partials, messages := 0, 0
	for _, l := range lines(t, generate(t, "cri", 2000, 5)) {
		m := criLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a CRI line: %q", l)
		}
		msg.WriteString(m[4])
		if m[3] == "P" {
			partials++
			continue
		}
		messages++
		if !json.Valid([]byte(msg.String())) {
			t.Fatalf("reassembled message is not JSON: %s", msg.String())
		}
		msg.Reset()
	}
	if partials == 0 || partials > messages/5 {
		t.Errorf("%d P lines for %d messages", partials, messages)
	}
}

func TestUnknownKind(t *testing.T) {
	if _, err := New("xml", 1); err == nil {
		t.Fatal("New(xml) succeeded")
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, kind := range Kinds {
		b.Run(kind, func(b *testing.B) {
			g, err := New(kind, 1)
			if err != nil {
				b.Fatal(err)
			}
			var buf []byte
			b.ReportAllocs()
			for range b.N {
				buf = g.Append(buf[:0])
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}
