package record

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// Bad protobuf input: every request that does not decode is refused whole
// with a *DecodeError that says what and at which byte, and the arena is
// as it was.

// pb is a tiny protobuf writer for hand-made requests.
type pb []byte

func (p pb) tag(field, wt int) pb         { return appendTag(p, field, wt) }
func (p pb) uint(field int, u uint64) pb  { return appendVarint(p.tag(field, wireVarint), u) }
func (p pb) fix64(field int, u uint64) pb { return appendFixed64Field(p, field, u) }
func (p pb) fix32(field int, u uint32) pb {
	return append(p.tag(field, wireFixed32), byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
}
func (p pb) bytes(field int, b []byte) pb       { return appendBytesField(p, field, b) }
func (p pb) str(field int, s string) pb         { return p.bytes(field, []byte(s)) }
func (p pb) msg(field int, m ...pb) pb          { return p.bytes(field, concat(m...)) }
func (p pb) raw(b ...byte) pb                   { return append(p, b...) }
func (p pb) field(field, wt int, payload pb) pb { return append(p.tag(field, wt), payload...) }

// kvOf is a KeyValue of key k and AnyValue v (pbKV, of otlp_passthrough_test.go,
// holds a string).
func kvOf(k string, v pb) pb { return pb{}.str(1, k).msg(2, v) }

// requestOf is a request of one ResourceLogs and one ScopeLogs holding
// the log records lrs.
func requestOf(lrs ...pb) []byte {
	sl := pb{}
	for _, l := range lrs {
		sl = sl.msg(2, l)
	}
	return pb{}.msg(1, pb{}.msg(2, sl))
}

func concat(ms ...pb) pb {
	var out pb
	for _, m := range ms {
		out = append(out, m...)
	}
	return out
}

// payloadOf is a valid payload of wire type wt.
func payloadOf(wt int) pb {
	switch wt {
	case wireVarint:
		return pb{0x96, 0x01}
	case wireFixed64:
		return pb{1, 2, 3, 4, 5, 6, 7, 8}
	case wireFixed32:
		return pb{1, 2, 3, 4}
	}
	return pb{3, 'a', 'b', 'c'}
}

// Valid parts, to put before the bad ones so that offsets are not trivial
// and a failing decode has decoded records to drop.
var (
	goodKV  = pb{}.str(1, "k").msg(2, pb{}.str(1, "v")) // a KeyValue
	goodLog = pb{}.fix64(1, 1700000000000000000).str(3, "INFO").msg(5, pb{}.str(1, "hello")).bytes(6, goodKV)
	goodRL  = pb{}.msg(2, pb{}.msg(2, goodLog))
)

// A container puts a message of one type into a request: the chain of
// fields that hold it, innermost first, each after some valid fields.
type hold struct {
	field  int
	before pb
}

var containers = map[string][]hold{
	"ExportLogsServiceRequest": {},
	"ResourceLogs":             {{1, pb{}.msg(1, goodRL)}},
	"Resource":                 {{1, nil}, {1, pb{}.msg(1, goodRL)}},
	"ScopeLogs":                {{2, pb{}.msg(1, pb{}.bytes(1, goodKV))}, {1, nil}},
	"InstrumentationScope":     {{1, nil}, {2, nil}, {1, pb{}.msg(1, goodRL)}},
	"LogRecord":                {{2, pb{}.msg(1, pb{}.str(1, "lib")).msg(2, goodLog)}, {2, nil}, {1, nil}},
	"LogRecord.body":           {{5, nil}, {2, nil}, {2, nil}, {1, nil}},
	"LogRecord.attributes":     {{6, pb{}.bytes(6, goodKV)}, {2, pb{}.msg(2, goodLog)}, {2, nil}, {1, nil}},
	"Resource.attributes":      {{1, pb{}.bytes(1, goodKV)}, {1, nil}, {1, nil}},
	"Scope.attributes":         {{3, pb{}.str(1, "lib")}, {1, nil}, {2, nil}, {1, nil}},
	"ArrayValue":               {{5, nil}, {5, pb{}.fix64(11, 5)}, {2, nil}, {2, nil}, {1, nil}},
	"KeyValueList":             {{6, nil}, {5, nil}, {2, nil}, {2, nil}, {1, nil}},
	"KeyValueList.values":      {{1, pb{}.bytes(1, goodKV)}, {6, nil}, {5, nil}, {2, nil}, {2, nil}, {1, nil}},
}

// place puts msg, a message of type kind, into a request; at, an offset in
// msg, becomes the offset in the request.
func place(kind string, msg pb, at int) ([]byte, int) {
	chain, ok := containers[kind]
	if !ok {
		panic(kind)
	}
	for _, h := range chain {
		outer := append(append(pb(nil), h.before...), pb{}.bytes(h.field, msg)...)
		at += len(outer) - len(msg)
		msg = outer
	}
	return msg, at
}

// knownFields lists the fields of each message that the decoder reads, with
// their wire types, and where (a container) a message of the type goes.
var knownFields = []struct {
	msg, in string
	fields  map[int]int
}{
	{"ExportLogsServiceRequest", "ExportLogsServiceRequest", map[int]int{1: wireBytes}},
	{"ResourceLogs", "ResourceLogs", map[int]int{1: wireBytes, 2: wireBytes, 3: wireBytes}},
	{"Resource", "Resource", map[int]int{1: wireBytes, 2: wireVarint}},
	{"ScopeLogs", "ScopeLogs", map[int]int{1: wireBytes, 2: wireBytes, 3: wireBytes}},
	{"InstrumentationScope", "InstrumentationScope", map[int]int{1: wireBytes, 2: wireBytes, 3: wireBytes, 4: wireVarint}},
	{"LogRecord", "LogRecord", map[int]int{
		1: wireFixed64, 2: wireVarint, 3: wireBytes, 5: wireBytes, 6: wireBytes, 7: wireVarint,
		8: wireFixed32, 9: wireBytes, 10: wireBytes, 11: wireFixed64, 12: wireBytes,
	}},
	{"KeyValue (log attribute)", "LogRecord.attributes", map[int]int{1: wireBytes, 2: wireBytes}},
	{"KeyValue (resource attribute)", "Resource.attributes", map[int]int{1: wireBytes, 2: wireBytes}},
	{"KeyValue (scope attribute)", "Scope.attributes", map[int]int{1: wireBytes, 2: wireBytes}},
	{"KeyValue (kvlist entry)", "KeyValueList.values", map[int]int{1: wireBytes, 2: wireBytes}},
	{"AnyValue", "LogRecord.body", map[int]int{
		1: wireBytes, 2: wireVarint, 3: wireVarint, 4: wireFixed64, 5: wireBytes, 6: wireBytes, 7: wireBytes,
	}},
	{"ArrayValue", "ArrayValue", map[int]int{1: wireBytes}},
	{"KeyValueList", "KeyValueList", map[int]int{1: wireBytes}},
}

// decodeBad decodes a request that must fail with cause into an arena that
// holds records already, and checks that the error says where, and that
// the arena and dst are as before.
func decodeBad(t *testing.T, req []byte, cause error, at int) *DecodeError {
	t.Helper()
	for _, mode := range []Mode{Referenced, Owned} {
		de := decodeFails(t, req, mode)
		if de == nil {
			return nil
		}
		if !errors.Is(de, cause) {
			t.Errorf("mode %d: %v, want %v", mode, de, cause)
		}
		if at >= 0 && de.Offset != at {
			t.Errorf("mode %d: %v: offset %d, want %d", mode, de, de.Offset, at)
		}
		if mode == Owned {
			return de
		}
	}
	return nil
}

// decodeFails decodes req after a good request, expecting an error, and
// checks that the failed decode left nothing behind.
func decodeFails(t *testing.T, req []byte, mode Mode) *DecodeError {
	t.Helper()
	a := NewArena()
	before := pb{}.msg(1, goodRL)
	recs, err := a.DecodeOTLP(before, mode, make([]*Record, 0, 2))
	if err != nil || len(recs) != 1 {
		t.Fatal(len(recs), err)
	}
	st := arenaState(a)
	got, err := a.DecodeOTLP(req, mode, recs)
	if err == nil {
		t.Errorf("mode %d: %x decodes to %d records", mode, req, len(got)-1)
		return nil
	}
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("mode %d: %T %v, not a *DecodeError", mode, err, err)
	}
	if de.Offset < 0 || de.Offset > len(req) {
		t.Errorf("mode %d: %v: offset out of the input", mode, de)
	}
	if len(got) != 1 || &got[:cap(got)][0] != &recs[:cap(recs)][0] || got[:cap(got)][1] != nil {
		t.Errorf("mode %d: a failed decode returned %d records, not dst", mode, len(got))
	}
	if s := arenaState(a); s != st {
		t.Errorf("mode %d: a failed decode left the arena at %+v, was %+v", mode, s, st)
	}
	// The arena decodes as a fresh one does.
	next, err := a.DecodeOTLP(before, mode, got)
	if err != nil || len(next) != 2 || !reflect.DeepEqual(next[1].ToGo(), recs[0].ToGo()) {
		t.Errorf("mode %d: the next decode: %v", mode, err)
	}
	return de
}

type arenaSnapshot struct{ nodes, slab, bufs, scratch, nrec int }

func arenaState(a *Arena) arenaSnapshot {
	return arenaSnapshot{len(a.nodes), len(a.slab), len(a.bufs), len(a.scratch), a.nrec}
}

func TestOTLPBadWireType(t *testing.T) {
	for _, m := range knownFields {
		for field, want := range m.fields {
			for _, wt := range []int{wireVarint, wireFixed64, wireBytes, wireFixed32, 3, 4, 6, 7} {
				if wt == want {
					continue
				}
				t.Run(fmt.Sprintf("%s/%d/wt%d", m.msg, field, wt), func(t *testing.T) {
					// A valid field of another number first.
					msg := pb{}.fix32(99, 7)
					at := len(msg)
					msg = msg.field(field, wt, payloadOf(wt))
					req, off := place(m.in, msg, at)
					de := decodeBad(t, req, ErrWireType, off)
					if de != nil && !strings.Contains(de.Detail, "wire type") {
						t.Errorf("detail %q", de.Detail)
					}
				})
			}
		}
	}
}

// TestOTLPGroups: groups (wire types 3 and 4, which OTLP does not use) and
// the reserved wire types 6 and 7 are refused on unknown fields too, at
// their tag.
func TestOTLPGroups(t *testing.T) {
	for kind := range containers {
		for _, wt := range []int{3, 4, 6, 7} {
			msg := pb{}.fix32(99, 7)
			at := len(msg)
			msg = msg.tag(100, wt).tag(100, 4)
			req, off := place(kind, msg, at)
			t.Run(fmt.Sprintf("%s/wt%d", kind, wt), func(t *testing.T) {
				decodeBad(t, req, ErrWireType, off)
			})
		}
	}
}

func TestOTLPBadUTF8(t *testing.T) {
	for _, tt := range []struct {
		in    string
		field int
	}{
		{"ResourceLogs", 3}, {"ScopeLogs", 3}, {"InstrumentationScope", 1}, {"InstrumentationScope", 2},
		{"LogRecord", 3}, {"LogRecord", 12}, {"LogRecord.attributes", 1}, {"Resource.attributes", 1},
		{"Scope.attributes", 1}, {"KeyValueList.values", 1}, {"LogRecord.body", 1},
	} {
		for _, s := range []string{"\xff", "caf\xc3", "ok \xed\xa0\x80 surrogate", "\xc0\xaf overlong"} {
			t.Run(fmt.Sprintf("%s/%d/%q", tt.in, tt.field, s), func(t *testing.T) {
				msg := pb{}.fix32(99, 7)
				at := len(msg) + 2 // the string's bytes, after tag and length
				msg = msg.str(tt.field, s)
				req, off := place(tt.in, msg, at)
				decodeBad(t, req, ErrInvalidUTF8, off)
			})
		}
	}
	// Bytes are not strings.
	req, _ := place("LogRecord.body", pb{}.bytes(7, []byte{0xff, 0xfe}), 0)
	if _, err := NewArena().DecodeOTLP(req, Referenced, nil); err != nil {
		t.Fatal(err)
	}
}

func TestOTLPBadIDLength(t *testing.T) {
	for _, tt := range []struct{ field, n int }{
		{9, 1}, {9, 8}, {9, 15}, {9, 17}, {9, 32}, {10, 1}, {10, 7}, {10, 9}, {10, 16},
	} {
		t.Run(fmt.Sprintf("%d/%d", tt.field, tt.n), func(t *testing.T) {
			msg := pb{}.fix32(8, 1)
			at := len(msg) + 2
			msg = msg.bytes(tt.field, make([]byte, tt.n))
			req, off := place("LogRecord", msg, at)
			decodeBad(t, req, ErrIDLength, off)
		})
	}
	// Of the right length, or empty (unset): fine.
	for _, msg := range []pb{pb{}.bytes(9, make([]byte, 16)).bytes(10, make([]byte, 8)), pb{}.bytes(9, nil).bytes(10, nil)} {
		req, _ := place("LogRecord", msg, 0)
		if _, err := NewArena().DecodeOTLP(req, Referenced, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// nested is an AnyValue of k arrays (or kvlists) in one another around a
// string.
func nested(k int, kvlist bool) pb {
	v := pb{}.str(1, "x")
	for range k {
		if kvlist {
			v = pb{}.msg(6, pb{}.msg(1, pb{}.str(1, "k"), pb{}.msg(2, v)))
		} else {
			v = pb{}.msg(5, pb{}.msg(1, v))
		}
	}
	return v
}

// TestOTLPDepth: the root map is depth 1, so the body's array or kvlist
// is at depth 2, an attribute's at 3, a resource or scope attribute's at 4.
func TestOTLPDepth(t *testing.T) {
	const max = 6
	for _, tt := range []struct {
		in    string
		depth int // of an array or kvlist value
		wrap  func(v pb) pb
	}{
		{"LogRecord.body", 2, func(v pb) pb { return v }},
		{"LogRecord.attributes", 3, func(v pb) pb { return pb{}.str(1, "a").msg(2, v) }},
		{"Resource.attributes", 4, func(v pb) pb { return pb{}.str(1, "a").msg(2, v) }},
		{"Scope.attributes", 4, func(v pb) pb { return pb{}.str(1, "a").msg(2, v) }},
	} {
		for _, kvlist := range []bool{false, true} {
			ok := max - tt.depth + 1 // levels that fit
			t.Run(fmt.Sprintf("%s/kvlist=%v", tt.in, kvlist), func(t *testing.T) {
				for _, k := range []int{ok, ok + 1, ok + 10} {
					req, _ := place(tt.in, tt.wrap(nested(k, kvlist)), 0)
					a := NewArena()
					a.Limits.MaxDepth = max
					_, err := a.DecodeOTLP(req, Referenced, nil)
					if k == ok {
						if err != nil {
							t.Fatalf("%d levels: %v", k, err)
						}
						continue
					}
					if !errors.Is(err, ErrDepth) {
						t.Fatalf("%d levels: %v, want %v", k, err, ErrDepth)
					}
				}
			})
		}
	}
	// The default limit: 128 levels.
	req, _ := place("LogRecord.body", nested(DefaultMaxDepth, false), 0)
	decodeBad(t, req, ErrDepth, -1)
	req, _ = place("LogRecord.body", nested(DefaultMaxDepth-1, false), 0)
	if _, err := NewArena().DecodeOTLP(req, Referenced, nil); err != nil {
		t.Fatal(err)
	}
}

func TestOTLPVarints(t *testing.T) {
	over := pb{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}       // bit 64
	long := pb{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01} // 11 bytes
	for _, tt := range []struct {
		name  string
		in    string
		msg   pb
		at    int
		cause error
	}{
		{"value overflow", "LogRecord", pb{}.tag(2, wireVarint).raw(over...), 1, ErrSyntax},
		{"value too long", "LogRecord", pb{}.tag(7, wireVarint).raw(long...), 1, ErrSyntax},
		{"any int overflow", "LogRecord.body", pb{}.tag(3, wireVarint).raw(over...), 1, ErrSyntax},
		{"unknown varint overflow", "ScopeLogs", pb{}.tag(50, wireVarint).raw(over...), 2, ErrSyntax},
		{"length overflow", "ResourceLogs", pb{}.tag(3, wireBytes).raw(over...), 1, ErrSyntax},
		{"tag overflow", "Resource", pb{}.raw(over...), 0, ErrSyntax},
		{"field number 0", "LogRecord", pb{}.tag(0, wireVarint).raw(1), 0, ErrSyntax},
		{"field number above 2^29-1", "AnyValue", pb{}.raw(0xf8, 0xff, 0xff, 0xff, 0x1f, 0), 0, ErrSyntax},
		{"truncated varint", "LogRecord", pb{}.tag(2, wireVarint).raw(0x80), 1, ErrTruncated},
		{"truncated tag", "Resource", pb{}.raw(0x80), 0, ErrTruncated},
		{"length past the end", "KeyValueList", pb{}.tag(1, wireBytes).raw(0x7f), 2, ErrTruncated},
		{"truncated fixed64", "LogRecord", pb{}.tag(1, wireFixed64).raw(1, 2, 3), 1, ErrTruncated},
		{"truncated fixed32", "LogRecord", pb{}.tag(8, wireFixed32).raw(1, 2, 3), 1, ErrTruncated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if in == "AnyValue" {
				in = "LogRecord.body"
			}
			msg := pb{}.fix64(97, 0)
			at := len(msg) + tt.at
			req, off := place(in, append(msg, tt.msg...), at)
			decodeBad(t, req, tt.cause, off)
		})
	}
}

// TestOTLPMergedOffsets: a message field sent more than once is decoded
// from the occurrences' concatenation; an error in it still has the
// offset of the request.
func TestOTLPMergedOffsets(t *testing.T) {
	first := pb{}.bytes(1, goodKV)
	second := pb{}.fix32(99, 1).uint(1, 5) // attributes with wire type 0
	rl := pb{}.bytes(1, first).bytes(1, second)
	at := len(rl) - 2 // the tag of the bad field
	req, off := place("ResourceLogs", rl, at)
	decodeBad(t, req, ErrWireType, off)

	// Three bodies, the last one with a bad string in a kvlist that the
	// second one started: nested merges.
	body := pb{}.msg(5, pb{}.msg(6, pb{}.bytes(1, goodKV)))
	body = append(body, body...)
	bad := pb{}.msg(1, pb{}.str(1, "k"), pb{}.msg(2, pb{}.str(1, "\xff")))
	body = append(body, pb{}.msg(5, pb{}.msg(6, bad))...)
	at = len(body) - 1 // the string's one byte
	req, off = place("LogRecord", body, at)
	decodeBad(t, req, ErrInvalidUTF8, off)
}

// TestOTLPTruncated decodes every prefix of valid requests: a prefix
// decodes (when it ends between top-level fields) or fails with a
// *DecodeError, as the oracle does, and a failure leaves nothing behind.
func TestOTLPTruncated(t *testing.T) {
	reqs := [][]byte{
		marshalOracle(t, genOracleRequest(3, 12, 5)),
		concat(pb{}.msg(1, goodRL), pb{}.msg(1, goodRL)),
	}
	for ri, req := range reqs {
		decoded := 0
		for n := range len(req) {
			prefix := req[:n]
			oracleErr := proto.Unmarshal(prefix, &logs.LogsData{})
			a := NewArena()
			recs, err := a.DecodeOTLP(prefix, Referenced, nil)
			if (err == nil) != (oracleErr == nil) {
				t.Fatalf("request %d, %d bytes: we say %v, the oracle %v", ri, n, err, oracleErr)
			}
			if err == nil {
				decoded++
				checkOracle(t, prefix, recs)
				continue
			}
			decodeFails(t, prefix, Referenced)
			decodeFails(t, prefix, Owned)
			if t.Failed() {
				t.Fatalf("request %d, %d bytes", ri, n)
			}
		}
		if decoded < 2 {
			t.Errorf("request %d: %d prefixes decode", ri, decoded)
		}
	}
}

// checkOracle compares records decoded from req with the oracle's views.
func checkOracle(t *testing.T, req []byte, recs []*Record) {
	t.Helper()
	m := &logs.LogsData{}
	if err := proto.Unmarshal(req, m); err != nil {
		t.Fatal(err)
	}
	sameAsOracle(t, m, recs)
}

// TestOTLPParsedAnyway: what the view leaves out is checked as protobuf
// checks it, so that we refuse what protobuf-go refuses (findings of
// FuzzDecodeOTLP).
func TestOTLPParsedAnyway(t *testing.T) {
	// An array or kvlist that another member of its AnyValue replaces.
	arr := pb{}.tag(9, wireFixed64).raw(1, 2, 3)
	req, off := place("LogRecord.body", pb{}.msg(5, arr).str(1, "s"), 3)
	decodeBad(t, req, ErrTruncated, off)
	kvl := pb{}.msg(1, pb{}.str(1, "\xff"))
	req, off = place("LogRecord.body", pb{}.msg(6, kvl).msg(5, arr[:0]), 6)
	decodeBad(t, req, ErrInvalidUTF8, off)

	// Each occurrence of a field sent twice is a message on its own,
	// though their concatenation is one: [field 6, varint 0x30].
	rl := pb{}.bytes(1, pb{}.tag(6, wireVarint)).bytes(1, pb{0x30})
	req, off = place("ResourceLogs", rl, 3)
	decodeBad(t, req, ErrTruncated, off)

	// A Resource's entity_refs (not in the view): strings are UTF-8.
	req, off = place("Resource", pb{}.msg(3, pb{}.str(2, "ho\xffst")), 4)
	decodeBad(t, req, ErrInvalidUTF8, off)
	req, off = place("Resource", pb{}.msg(3, pb{}.str(4, "k").tag(1, wireBytes).raw(5)), 7)
	decodeBad(t, req, ErrTruncated, off)
	for _, ok := range []pb{
		pb{}.msg(3, pb{}.str(1, "https://s").str(2, "host").str(3, "host.name").str(4, "x").uint(9, 1)),
		pb{}.uint(3, 5), // another wire type: unknown, for protobuf-go too
		pb{}.msg(3, pb{}.uint(2, 1).str(7, "\xff")), // the same inside
	} {
		req, _ := place("Resource", ok, 0)
		recs, err := NewArena().DecodeOTLP(req, Referenced, nil)
		if err != nil {
			t.Fatalf("%x: %v", req, err)
		}
		checkOracle(t, req, recs)
	}
}
