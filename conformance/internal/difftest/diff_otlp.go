package difftest

import (
	"bytes"
	"fmt"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/policytest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// This file compares the backends on OTLP policies: their records are
// OTLP records, made from views (record.Arena.DecodeOTLPView) one by one,
// or decoded from one protobuf request in which several share their
// resource and scope (CompareOTLPRequest).

var (
	rawPath  = record.MustParsePath(".attributes.raw")
	bodyPath = record.MustParsePath(".body")
)

func load(f *policy.File, info *check.Info, src string, backends []backend.Backend) ([]backend.Program, error) {
	runners := make([]backend.Program, len(backends))
	for i, b := range backends {
		r, err := b.Load(f, info, policytest.TestOptions())
		if err != nil {
			return nil, &Mismatch{Policy: src, Detail: fmt.Sprintf("[%s] load: %v", b.Name, err)}
		}
		runners[i] = r
	}
	return runners, nil
}

// viewJSON is an OTLP record's view as JSON (with "time", from %time),
// the sign of zero aside (see Compare).
func viewJSON(rec *record.Record) string {
	return negZero.ReplaceAllString(string(rec.AppendJSON(nil)), "${1}0.0")
}

// observe runs rn on rec, an OTLP record whose view before the run is
// before, and returns its outcome. A run that faults must leave the record
// as it was; one that keeps the record without a fault must leave an OTLP
// record that encodes as protobuf and decodes again. (Its view as JSON
// need not decode: DecodeOTLPView refuses counts, flags and severity
// numbers outside the wire's widths, which runs may write.)
func observe(name string, rn backend.Program, rec *record.Record, before string, scratch *record.Arena) (run, error) {
	var got run
	var err error
	if got.out, err = rn.Run(rec); err != nil && !got.out.Faulted() {
		return got, fmt.Errorf("[%s] error: %v", name, err)
	}
	if got.out.Action != spec.Keep {
		return got, nil
	}
	got.json, got.tag, got.time = viewJSON(rec), string(rec.Tag()), rec.Time()
	if got.out.Faulted() {
		if got.json != before {
			return got, fmt.Errorf("[%s] fault %s changed the record: %s", name, got.out.Fault, got.json)
		}
		return got, nil
	}
	if err := rec.CheckOTLP(); err != nil {
		return got, fmt.Errorf("[%s] kept a record that is no LogRecord (%v): %s", name, err, got.json)
	}
	scratch.Reset()
	enc := record.OTLPEncoder{FromViews: true} // bytes compared across backends: not the bytes a record came in
	req := enc.AppendProto(nil, []*record.Record{rec})
	got.proto = protoNoNegZero(req)
	if recs, err := scratch.DecodeOTLP(req, record.Owned, nil); err != nil || len(recs) != 1 {
		return got, fmt.Errorf("[%s] the kept record does not decode from protobuf (%d records, %v): %s", name, len(recs), err, got.json)
	}
	return got, nil
}

// protoNoNegZero is a protobuf request with its doubles -0.0 (an
// AnyValue's double_value, field 4) made 0.0, as viewJSON does.
func protoNoNegZero(req []byte) string {
	return string(bytes.ReplaceAll(req, []byte{0x21, 0, 0, 0, 0, 0, 0, 0, 0x80}, []byte{0x21, 0, 0, 0, 0, 0, 0, 0, 0}))
}

func (r run) String() string {
	return fmt.Sprintf("%s %s tag=%q time=%d proto=%x", r.out, r.json, r.tag, r.time, r.proto)
}

// compareViews is Compare for an OTLP policy: each of views is an OTLP
// record's view in JSON.
func compareViews(src string, backends []backend.Backend, runners []backend.Program, views [][]byte) error {
	a, scratch := record.NewArena(), record.NewArena()
	for _, line := range views {
		var first run
		for i, rn := range runners {
			a.Reset()
			rec, err := a.DecodeOTLPView(line, record.Owned)
			if err != nil {
				return fmt.Errorf("view %s: %v", line, err)
			}
			rec.SetTag([]byte("app.log"))
			rec.Commit()
			got, err := observe(backends[i].Name, rn, rec, viewJSON(rec), scratch)
			if err != nil {
				return &Mismatch{Policy: src, Record: line, Detail: err.Error()}
			}
			if i == 0 {
				first = got
				continue
			}
			if got != first {
				return &Mismatch{Policy: src, Record: line, Detail: fmt.Sprintf("[%s] %s\n[%s] %s",
					backends[0].Name, first, backends[i].Name, got)}
			}
		}
	}
	return nil
}

// CompareOTLPRequest encodes views (OTLP records' views in JSON) as one
// protobuf request, regrouped, so that the records of equal resources and
// scopes share them once decoded; every third record gets bytes, which
// JSON cannot hold, as its attribute "raw", and every seventh from the
// fourth on as its body. Each backend decodes the request and runs the
// checked OTLP policy f on its records in turn, in one arena: a run must
// change its own record only (its resource and scope are its copies),
// whatever its siblings share. The backends must agree record by record
// and on the request the kept records encode to; and the first, on each
// record without bytes, with its run on that record decoded alone from
// its view.
func CompareOTLPRequest(f *policy.File, info *check.Info, src string, backends []backend.Backend, views [][]byte) error {
	runners, err := load(f, info, src, backends)
	if err != nil {
		return err
	}
	a, scratch := record.NewArena(), record.NewArena()
	var in []*record.Record
	for i, v := range views {
		rec, err := a.DecodeOTLPView(v, record.Owned)
		if err != nil {
			return fmt.Errorf("view %s: %v", v, err)
		}
		raw := a.NewBytes([]byte{0, 0xff, 'h', 'i', byte('0' + i%10)})
		if i%3 == 0 {
			_ = rec.Set(rawPath, raw)
		}
		if i%7 == 3 {
			_ = rec.Set(bodyPath, raw)
		}
		in = append(in, rec)
	}
	enc := record.OTLPEncoder{FromViews: true} // bytes compared across backends: not the bytes a record came in
	req := enc.AppendProto(nil, in)
	var first []run
	var befores []string
	var hasBytes []bool
	var firstOut []byte
	for bi, rn := range runners {
		name := backends[bi].Name
		a.Reset()
		recs, err := a.DecodeOTLP(req, record.Referenced, nil)
		if err != nil || len(recs) != len(views) {
			return fmt.Errorf("the request of %d views decodes to %d records: %v", len(views), len(recs), err)
		}
		before := make([]string, len(recs))
		for i, rec := range recs {
			rec.SetTag([]byte("app.log"))
			rec.Commit()
			before[i] = viewJSON(rec)
		}
		if bi == 0 {
			befores = before
			for _, rec := range recs {
				v1, _ := rec.Get(rawPath)
				v2, _ := rec.Get(bodyPath)
				hasBytes = append(hasBytes, v1.Kind() == record.Bytes || v2.Kind() == record.Bytes)
			}
		}
		// want is what each record must hold: its view before its run,
		// and after it what the run left.
		want := append([]string(nil), before...)
		gots := make([]run, len(recs))
		for i, rec := range recs {
			mismatch := func(format string, args ...any) error {
				return &Mismatch{Policy: src, Record: []byte(before[i]), Detail: fmt.Sprintf("record %d of %d: ", i, len(recs)) + fmt.Sprintf(format, args...)}
			}
			if before[i] != befores[i] {
				return mismatch("[%s] decodes the request otherwise: %s\n[%s] %s", backends[0].Name, befores[i], name, before[i])
			}
			got, err := observe(name, rn, rec, before[i], scratch)
			if err != nil {
				return mismatch("%v", err)
			}
			gots[i] = got
			want[i] = viewJSON(rec)
			for j, sib := range recs {
				if s := viewJSON(sib); s != want[j] {
					return mismatch("[%s] the run changed record %d too: %s\nwas %s", name, j, s, want[j])
				}
			}
			if bi == 0 {
				continue
			}
			if got != first[i] {
				return mismatch("[%s] %s\n[%s] %s", backends[0].Name, first[i], name, got)
			}
		}
		if bi == 0 {
			first = gots
		}
		// Every record, edited or not, goes out in one request again.
		var kept []*record.Record
		for i, rec := range recs {
			if gots[i].out.Kept() {
				kept = append(kept, rec)
			}
		}
		out := enc.AppendProto(nil, kept)
		if back, err := scratch.DecodeOTLP(out, record.Owned, nil); err != nil || len(back) != len(kept) {
			return &Mismatch{Policy: src, Detail: fmt.Sprintf("[%s] the %d kept records encode to a request of %d: %v", name, len(kept), len(back), err)}
		}
		scratch.Reset()
		if bi == 0 {
			firstOut = out
		} else if protoNoNegZero(out) != protoNoNegZero(firstOut) {
			return &Mismatch{Policy: src, Detail: fmt.Sprintf("[%s] the kept records encode to\n%x\n[%s] to\n%x", backends[0].Name, firstOut, name, out)}
		}
	}
	// Alone, from its view, each record runs as it did in its group.
	for i, v := range befores {
		if hasBytes[i] {
			continue // its view holds the bytes as base64 strings
		}
		a.Reset()
		rec, err := a.DecodeOTLPView([]byte(v), record.Owned)
		if err != nil {
			return fmt.Errorf("view %s: %v", v, err)
		}
		rec.SetTag([]byte("app.log"))
		rec.Commit()
		got, err := observe(backends[0].Name, runners[0], rec, viewJSON(rec), scratch)
		if err != nil {
			return &Mismatch{Policy: src, Record: []byte(v), Detail: err.Error()}
		}
		// Not its protobuf: a view's "time" is set, a LogRecord's may
		// not be (time_unix_nano 0).
		want := first[i]
		got.proto, want.proto = "", ""
		if got != want {
			return &Mismatch{Policy: src, Record: []byte(v), Detail: fmt.Sprintf("[%s] in its group: %s\n[%s] alone, from its view: %s", backends[0].Name, want, backends[0].Name, got)}
		}
	}
	return nil
}
