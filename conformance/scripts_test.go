package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/luascript"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// scriptsNow is the wall clock of the Fluent Bit-style scripts' runs, and
// the time of their records (plus 0.25 s).
var scriptsNow = time.Date(2026, 11, 30, 14, 5, 9, 0, time.UTC)

// TestScripts runs the Fluent Bit-style filters of scripts/: each X.lua
// (function cb) over the records of X.in.jsonl, tagged app.log, on one
// LState as Fluent Bit runs one filter instance. It writes each record it
// emits as a JSON line and each fault as "# record N: reason: message",
// which must be X.out.jsonl (POLICYRUN_UPDATE=1 rewrites them).
// docs/lua.md says what Fluent Bit gives for each.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("scripts/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".lua")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := luascript.Load(name+".lua", src, "cb")
			if err != nil {
				t.Fatal(err)
			}
			s.Clock = spec.FixedClock(scriptsNow)
			s.Location = time.UTC
			var printed bytes.Buffer
			s.Stderr = &printed
			r, err := s.NewRunner()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			in, err := os.ReadFile(strings.TrimSuffix(file, ".lua") + ".in.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			a := record.NewArena()
			sc := bufio.NewScanner(bytes.NewReader(in))
			for n := 1; sc.Scan(); n++ {
				rec, err := a.DecodeJSON(sc.Bytes(), record.Owned)
				if err != nil {
					t.Fatalf("line %d: %v", n, err)
				}
				rec.SetTag([]byte("app.log"))
				rec.SetTime(scriptsNow.UnixNano() + 250_000_000)
				rec.Commit()
				res, extra, err := r.RunSplit(rec)
				if res.Faulted() {
					fmt.Fprintf(&out, "# record %d: %s: %v\n", n, res.Fault, err)
				} else if err != nil {
					t.Fatalf("record %d: %v", n, err)
				}
				if !res.Kept() {
					continue
				}
				for _, r := range append([]*record.Record{rec}, extra...) {
					out.Write(r.AppendJSON(nil))
					if r.Time() != rec.Time() || r.Time() != scriptsNow.UnixNano()+250_000_000 {
						fmt.Fprintf(&out, " # time %s", time.Unix(0, r.Time()).UTC().Format(time.RFC3339Nano))
					}
					out.WriteByte('\n')
				}
			}
			wantFile := strings.TrimSuffix(file, ".lua") + ".out.jsonl"
			if os.Getenv("POLICYRUN_UPDATE") != "" {
				if err := os.WriteFile(wantFile, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("got\n%s\nwant\n%s", out.String(), want)
			}
			if printed.Len() > 0 {
				t.Errorf("the script printed %q", printed.String())
			}
		})
	}
}
