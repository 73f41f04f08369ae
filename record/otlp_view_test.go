package record

import (
	"reflect"
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
	wv, wt := recordViews(recs)
	gv, gt := oracleViews(m)
	if !reflect.DeepEqual(gv, wv) || !reflect.DeepEqual(gt, wt) {
		t.Fatalf("encoded\n %v %v\nwant\n %v %v", gv, gt, wv, wt)
	}
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
