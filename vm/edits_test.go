package vm

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/record"
)

func TestDifferEdits(t *testing.T) {
	a := record.NewArena()
	rec, err := a.DecodeJSON([]byte(`{"a": 1, "m": {"x": 1}, "k": {"p": [1]}}`), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDiffer(paths(".a", ".k", ".m.x", ".m.y", ".m.z", ".n", ".q"))
	d.Mark(rec)
	if d.Changed(rec) || len(d.Edits(rec)) != 0 {
		t.Fatal("changed before any edit")
	}
	// As runs would: set .m.z, then .m.y, remove .a, set .n; set .m.x
	// and .k to what they hold; remove .q, which is not there.
	set := func(p string, v record.Value) {
		if err := rec.Set(record.MustParsePath(p), v); err != nil {
			t.Fatal(err)
		}
	}
	set(".m.z", record.IntValue(1))
	set(".m.y", a.NewStringFrom("y"))
	rec.Remove(record.MustParsePath(".a"))
	set(".n", record.BoolValue(true))
	set(".m.x", record.IntValue(1))
	k, _ := rec.Get(record.MustParsePath(".k"))
	set(".k", a.Clone(k))
	rec.Remove(record.MustParsePath(".q"))
	rec.Commit()
	if !d.Changed(rec) || d.TimeChanged(rec) || d.TagChanged(rec) {
		t.Fatalf("Changed %v, TimeChanged %v, TagChanged %v", d.Changed(rec), d.TimeChanged(rec), d.TagChanged(rec))
	}
	var got []string
	for _, e := range d.Edits(rec) {
		if !d.writes[e.Write].Equal(e.Path) || e.Added != (e.Path.String() != ".a") {
			t.Errorf("%s: Write %d, Added %v", e.Path, e.Write, e.Added)
		}
		v := "removed"
		if e.Value.Kind() != record.Absent {
			v = string(a.AppendJSON(nil, e.Value))
		}
		got = append(got, e.Path.String()+"="+v)
	}
	// The removal first, then in the order of the record: m (now the
	// first key) with z before y, then n.
	want := ".a=removed .m.z=1 .m.y=\"y\" .n=true"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("edits %s, want %s", s, want)
	}

	rec.SetTime(5)
	rec.SetTag([]byte("t"))
	if !d.TimeChanged(rec) || !d.TagChanged(rec) {
		t.Error("time or tag change not seen")
	}
	d.Mark(rec)
	if d.Changed(rec) || len(d.Edits(rec)) != 0 {
		t.Error("changed right after Mark")
	}
}

func TestDifferAllocs(t *testing.T) {
	a := record.NewArena()
	ws := paths(".m.y", ".n")
	d := NewDiffer(ws)
	line := []byte(`{"m": {"x": 1}}`)
	run := func() {
		a.Reset()
		rec, err := a.DecodeJSON(line, record.Referenced)
		if err != nil {
			t.Fatal(err)
		}
		d.Mark(rec)
		_ = rec.Set(ws[0], record.IntValue(2))
		rec.Commit()
		if len(d.Edits(rec)) != 1 {
			t.Fatal("want one edit")
		}
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("%v allocations per record", n)
	}
}

func TestUnionPaths(t *testing.T) {
	u := Union(Access{Reads: paths(".a.b", ".c"), Writes: paths(".x"), ReadsTime: true},
		Access{Reads: paths(".a"), Writes: paths(".c.d", ".x.y"), SetsTag: true})
	if got := pathsString(u.Reads) + " | " + pathsString(u.Writes); got != ".a .c | .c.d .x" {
		t.Errorf("union %s", got)
	}
	if !u.ReadsTime || !u.SetsTag || u.SetsTime || u.ReadsTag {
		t.Errorf("flags %+v", u)
	}
	if got := pathsString(u.Paths()); got != ".a .c .x" {
		t.Errorf("paths %s", got)
	}
}
