package record

import (
	"reflect"
	"strings"
	"testing"

	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// keyOrder lists the keys of map m, nested maps of the view included.
func keyOrder(a *Arena, m Value, prefix string) []string {
	var out []string
	for it := a.Iter(m); it.Next(); {
		k := prefix + a.Str(it.Key())
		out = append(out, k)
		if (k == "resource" || k == "scope") && it.Value().Kind() == Map {
			out = append(out, keyOrder(a, it.Value(), k+".")...)
		}
	}
	return out
}

// An empty LogRecord: one ResourceLogs, one ScopeLogs, one LogRecord.
var emptyLogRecord = []byte{0x0a, 0x04, 0x12, 0x02, 0x12, 0x00}

func TestNewOTLPRecordIsEmptyLogRecord(t *testing.T) {
	a := NewArena()
	recs, err := a.DecodeOTLP(emptyLogRecord, Referenced, nil)
	if err != nil || len(recs) != 1 {
		t.Fatal(len(recs), err)
	}
	want := recs[0]
	r := a.NewOTLPRecord(Value{})
	if !r.IsOTLP() || r.Edited() {
		t.Fatal("not an unedited OTLP record")
	}
	if !reflect.DeepEqual(r.ToGo(), want.ToGo()) || r.Time() != want.Time() {
		t.Fatalf("got %v, want %v", r.ToGo(), want.ToGo())
	}
	if got, w := keyOrder(a, r.Root(), ""), keyOrder(a, want.Root(), ""); !reflect.DeepEqual(got, w) {
		t.Fatalf("key order %v, want %v", got, w)
	}
	if err := r.CheckOTLP(); err != nil {
		t.Fatal(err)
	}
	var e OTLPEncoder
	if got, w := e.AppendProto(nil, []*Record{r}), e.AppendProto(nil, recs); string(got) != string(w) {
		t.Fatalf("encodes as %x, want %x", got, w)
	}
}

func TestNewOTLPRecordEdited(t *testing.T) {
	a := NewArena()
	body := a.BeginMap(1)
	body.Add(a.NewStringFrom("msg"), a.NewStringFrom("hello"))
	res := a.BeginMap(3)
	attrs := a.BeginMap(1)
	attrs.Add(a.NewStringFrom("service.name"), a.NewStringFrom("svc"))
	res.Add(a.NewStringFrom("attributes"), attrs.Finish())
	res.Add(a.NewStringFrom("dropped_attributes_count"), IntValue(0))
	res.Add(a.NewStringFrom("schema_url"), a.NewStringFrom("https://x"))
	resource := res.Finish()

	var recs []*Record
	for i := range 3 {
		r := a.NewOTLPRecord(body.Finish())
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(r.Set(NewPath("severity_text"), a.NewStringFrom("INFO")))
		must(r.Set(NewPath("severity_number"), IntValue(9)))
		must(r.Set(NewPath("trace_id"), a.NewStringFrom("0102030405060708090a0b0c0d0e0f10")))
		must(r.Set(NewPath("attributes", "i"), IntValue(int64(i))))
		must(r.Set(NewPath("resource"), resource))
		must(r.Set(NewPath("scope", "name"), a.NewStringFrom("lib")))
		must(r.Set(NewPath("observed_time"), TimestampValue(1700000000000000000)))
		r.SetTime(1700000000000000000 - int64(i))
		r.Commit()
		if err := r.CheckOTLP(); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if got := keyOrder(a, recs[0].Root(), ""); got[0] != "body" || got[len(got)-1] != "scope.schema_url" {
		t.Fatalf("key order %v", got)
	}
	var e OTLPEncoder
	out := e.AppendProto(nil, recs)
	m := &logs.LogsData{}
	if err := proto.Unmarshal(out, m); err != nil {
		t.Fatal(err)
	}
	if n := len(m.ResourceLogs); n != 1 || len(m.ResourceLogs[0].ScopeLogs) != 1 {
		t.Fatalf("%d resource groups, want 1 with 1 scope", n)
	}
	sameAsOracle(t, m, recs)
}

// CheckOTLP runs after every run that edits an OTLP record: it allocates
// nothing unless it fails, and names the failing key with its group.
func TestCheckOTLPAllocs(t *testing.T) {
	a := NewArena()
	r := a.NewOTLPRecord(Value{})
	if err := r.Set(NewPath("resource", "attributes", "k"), IntValue(1)); err != nil {
		t.Fatal(err)
	}
	if err := r.Set(NewPath("scope", "name"), a.NewStringFrom("lib")); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := r.CheckOTLP(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
	if err := r.Set(NewPath("scope", "version"), IntValue(1)); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckOTLP(); err == nil || err.Error() != "record: OTLP view: .scope.version holds an int, not a string" {
		t.Errorf("got %v", err)
	}
}

// Records of NewOTLPRecord share their defaults until an edit: editing
// one leaves the others (and later ones) as they were, before and after
// a Reset, with a body or without.
func TestNewOTLPRecordShared(t *testing.T) {
	a := NewArena()
	for round := range 2 {
		x := a.NewOTLPRecord(Value{})
		y := a.NewOTLPRecord(a.NewStringFrom("b"))
		if err := x.Set(NewPath("resource", "attributes", "k"), IntValue(1)); err != nil {
			t.Fatal(err)
		}
		if err := y.Set(NewPath("scope", "name"), a.NewStringFrom("lib")); err != nil {
			t.Fatal(err)
		}
		x.Commit()
		y.Commit()
		z := a.NewOTLPRecord(Value{})
		got := string(x.AppendJSON(nil)) + "\n" + string(y.AppendJSON(nil)) + "\n" + string(z.AppendJSON(nil))
		empty := `"attributes":{},"severity_text":"","severity_number":0,"observed_time":"1970-01-01T00:00:00Z","trace_id":"","span_id":"","flags":0,"event_name":"","dropped_attributes_count":0`
		want := `{"time":"1970-01-01T00:00:00Z",` + empty + `,"resource":{"attributes":{"k":1},"dropped_attributes_count":0,"schema_url":""},"scope":{"name":"","version":"","attributes":{},"dropped_attributes_count":0,"schema_url":""}}` + "\n" +
			`{"time":"1970-01-01T00:00:00Z","body":"b",` + empty + `,"resource":{"attributes":{},"dropped_attributes_count":0,"schema_url":""},"scope":{"name":"lib","version":"","attributes":{},"dropped_attributes_count":0,"schema_url":""}}` + "\n" +
			`{"time":"1970-01-01T00:00:00Z",` + empty + `,"resource":{"attributes":{},"dropped_attributes_count":0,"schema_url":""},"scope":{"name":"","version":"","attributes":{},"dropped_attributes_count":0,"schema_url":""}}`
		if got != want {
			t.Errorf("round %d:\n%s\nwant\n%s", round, got, want)
		}
		a.Reset()
	}
}

// CheckOTLP looks again only at what the edits changed: a record
// committed with a value the view cannot hold (an embedder's mistake) is
// not faulted for it by later edits elsewhere, and an edit of it is.
func TestCheckOTLPChangedOnly(t *testing.T) {
	a := NewArena()
	r := a.NewOTLPRecord(Value{})
	if err := r.Set(NewPath("scope", "version"), IntValue(1)); err != nil {
		t.Fatal(err)
	}
	r.Commit()
	if err := r.Set(NewPath("attributes", "a"), IntValue(1)); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckOTLP(); err != nil {
		t.Errorf("an edit elsewhere: %v", err)
	}
	if err := r.Set(NewPath("scope", "name"), a.NewStringFrom("n")); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckOTLP(); err != nil {
		t.Errorf("an edit of the scope's name: %v", err)
	}
	if err := r.Set(NewPath("scope", "version"), IntValue(2)); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckOTLP(); err == nil || !strings.Contains(err.Error(), ".scope.version") {
		t.Errorf("an edit of the bad version: %v", err)
	}
	r.Discard()
	if err := r.Set(NewPath("trace_id"), a.NewStringFrom("xyz")); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckOTLP(); err == nil || !strings.Contains(err.Error(), ".trace_id") {
		t.Errorf("a bad id: %v", err)
	}
}

// NewOTLPRecordOf makes a record of the values given and no other key,
// in the view's order, that runs edit and CheckOTLP checks as any OTLP
// record.
func TestNewOTLPRecordOf(t *testing.T) {
	a := NewArena()
	attrs := a.BeginMap(1)
	attrs.Add(a.NewStringFrom("k"), IntValue(1))
	m := attrs.Finish()
	var v OTLPValues
	if got := string(a.NewOTLPRecordOf(&v).AppendJSON(nil)); got != `{"time":"1970-01-01T00:00:00Z"}` {
		t.Errorf("no values: %s", got)
	}
	v.Set(OTLPRoot, int(ViewSeverityNumber), IntValue(9))
	v.Set(OTLPRoot, int(ViewBody), a.NewStringFrom("b"))
	v.Set(OTLPScope, int(ViewScopeAttributes), m)
	v.Set(OTLPRoot, int(ViewAttributes), m)
	v.Set(OTLPRoot, int(ViewFlags), IntValue(3))
	v.Set(OTLPRoot, int(ViewFlags), Value{}) // taken away again
	v.Set(OTLPResource, int(ViewResSchemaURL), a.NewStringFrom("s"))
	v.Set(OTLPRoot, int(ViewResource), IntValue(1)) // not read
	if got := v.Get(OTLPRoot, int(ViewFlags)); got.Kind() != Absent {
		t.Errorf("a value taken away reads %v", got.Kind())
	}
	r := a.NewOTLPRecordOf(&v)
	want := `{"time":"1970-01-01T00:00:00Z","body":"b","attributes":{"k":1},"severity_number":9,"resource":{"schema_url":"s"},"scope":{"attributes":{"k":1}}}`
	if got := string(r.AppendJSON(nil)); got != want || !r.IsOTLP() {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if err := r.Set(NewPath("scope", "name"), IntValue(2)); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckOTLP(); err == nil {
		t.Error("an int scope name passes the check")
	}
	v.Reset()
	if got := string(a.NewOTLPRecordOf(&v).AppendJSON(nil)); got != `{"time":"1970-01-01T00:00:00Z"}` {
		t.Errorf("after Reset: %s", got)
	}
}
