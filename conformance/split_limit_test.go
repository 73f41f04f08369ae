package conformance

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// TestSplitLimit splits arrays at, under and over max_split on every
// backend, at a lowered limit and at the default (spec.DefaultLimits):
// over it, the run faults split_limit and the record goes on unchanged,
// or is dropped under on_fault drop; Run, which returns one record, takes
// an array of one element and faults on more.
func TestSplitLimit(t *testing.T) {
	const src = `policy "lim"%s
schema {
  xs: array<int>
  ...
}
set .seen = true
split .xs
set .y = .xs * 2
`
	line := xsLine
	def := spec.DefaultLimits.MaxSplit
	tests := []struct {
		header   string
		limit, n int
		want     int    // records kept
		result   string // of the first record
	}{
		{"", 3, 3, 3, "keep"},
		{"", 3, 4, 1, "fault (split_limit)"},
		{" on_fault drop", 3, 4, 0, "fault (split_limit), dropped"},
		{"", 0, def, def, "keep"},
		{"", 0, def + 1, 1, "fault (split_limit)"},
	}
	for _, tt := range tests {
		f, info := checkPolicy(t, "lim.policy", []byte(strings.Replace(src, "%s", tt.header, 1)))
		for _, b := range backends {
			p, err := b.Load(f, info, spec.Options{Limits: spec.Limits{MaxSplit: tt.limit}})
			if err != nil {
				t.Fatal(err)
			}
			rec, err := record.NewArena().DecodeJSON(line(tt.n), record.Owned)
			if err != nil {
				t.Fatal(err)
			}
			pieces, err := backend.RunAll(p, rec, nil)
			if err != nil {
				t.Fatalf("%s: %v", b.Name, err)
			}
			kept := 0
			for _, pc := range pieces {
				if pc.Result.Kept() {
					kept++
				}
			}
			if kept != tt.want || pieces[0].Result.String() != tt.result {
				t.Errorf("%s, limit %d, %d elements%s: %d kept, first %s; want %d, %s", b.Name, tt.limit, tt.n, tt.header, kept, pieces[0].Result, tt.want, tt.result)
			}
			if tt.result != "keep" && string(rec.AppendJSON(nil)) != string(line(tt.n)) {
				t.Errorf("%s: the record changed although the split faulted: %s", b.Name, rec.AppendJSON(nil))
			}
			// Run makes one record: one element, or the fault.
			one, err := record.NewArena().DecodeJSON(line(min(tt.n, 2)), record.Owned)
			if err != nil {
				t.Fatal(err)
			}
			if res, _ := p.Run(one); res.Fault != spec.SplitLimit {
				t.Errorf("%s: Run of a record of 2 elements: %s, want split_limit", b.Name, res)
			}
		}
	}
}

// TestSplitBytes: a split whose records would hold more bytes together
// than one run may build (spec.MaxBuilt: n times the record without the
// array) faults split_limit on every backend, the record unchanged,
// though its element count is within max_split; one just under goes.
func TestSplitBytes(t *testing.T) {
	const src = `policy "bytes"
schema {
  xs: array<int>
  ...
}
set .seen = true
split .xs
`
	f, info := checkPolicy(t, "bytes.policy", []byte(src))
	lim := spec.Limits{MaxRecord: 1 << 16} // MaxBuilt 1.25 MiB
	built := spec.MaxBuilt(lim)
	line := func(pad, n int) []byte {
		return []byte(`{"pad":"` + strings.Repeat("p", pad) + `","xs":[` + strings.TrimSuffix(strings.Repeat("1,", n), ",") + `]}`)
	}
	tests := []struct {
		pad, n int
		fault  bool
	}{
		{built / 100, 100, true}, // the pad alone is MaxBuilt/n
		{built/100 - 100, 100, false},
		{200, 1000, false},
		{built / 1000, 1000, true},
	}
	for _, tt := range tests {
		for _, b := range backends {
			p, err := b.Load(f, info, spec.Options{Limits: lim})
			if err != nil {
				t.Fatal(err)
			}
			in := line(tt.pad, tt.n)
			rec, err := record.NewArena().DecodeJSON(in, record.Owned)
			if err != nil {
				t.Fatal(err)
			}
			pieces, err := backend.RunAll(p, rec, nil)
			if err != nil {
				t.Fatalf("%s: %v", b.Name, err)
			}
			res := pieces[0].Result
			if got := res.Fault == spec.SplitLimit; got != tt.fault || (tt.fault && len(pieces) != 1) || (!tt.fault && len(pieces) != tt.n) {
				t.Errorf("%s, pad %d, %d elements: %d pieces, first %s; want split_limit %v", b.Name, tt.pad, tt.n, len(pieces), res, tt.fault)
			}
			if tt.fault && string(rec.AppendJSON(nil)) != string(in) {
				t.Errorf("%s: the record changed although the split faulted", b.Name)
			}
		}
	}
}
