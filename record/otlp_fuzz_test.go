package record

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/policyrun/policyrun/internal/testkit/golden"
)

// FuzzDecodeOTLP decodes protobuf requests, differentially against the
// oracle (protobuf-go's generated types), and checks that what decodes
// encodes to a request that decodes to the same records. Its seed corpus
// (testdata/fuzz/FuzzDecodeOTLP: requests of genOracleRequest, edge cases
// and the fuzzer's findings) runs with every go test.
func FuzzDecodeOTLP(f *testing.F) {
	f.Add(marshalOracle(f, genOracleRequest(1, 3, 2)))
	f.Add(emptyLogRecord)
	f.Fuzz(func(t *testing.T, req []byte) {
		const maxDepth = 32
		a, ao := NewArena(), NewArena()
		a.Limits.MaxDepth, ao.Limits.MaxDepth = maxDepth, maxDepth
		in := slices.Clone(req)
		recs, err := a.DecodeOTLP(in, Referenced, nil)
		recsO, errO := ao.DecodeOTLP(req, Owned, nil)
		if (err == nil) != (errO == nil) || len(recs) != len(recsO) {
			t.Fatalf("modes disagree: %v / %v", err, errO)
		}
		oracle := &logs.LogsData{}
		oracleErr := proto.Unmarshal(req, oracle)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(req) {
				t.Fatalf("bad error %#v", err)
			}
			if len(recs) != 0 || a.nrec != 0 || len(a.nodes) != 0 || len(a.slab) != 0 || len(a.bufs) != 0 {
				t.Fatalf("a failed decode left %d records, %d nodes, %d bytes, %d buffers", len(recs), len(a.nodes), len(a.slab), len(a.bufs))
			}
			if oracleErr == nil {
				// What protobuf-go takes and we refuse, deliberately: a
				// known field with another wire type (protobuf-go keeps it
				// as an unknown field) and groups, which OTLP does not use;
				// trace and span ids of the wrong length; nesting deeper
				// than our limit (protobuf-go's is 10,000).
				if !errors.Is(err, ErrWireType) && !errors.Is(err, ErrIDLength) && !errors.Is(err, ErrDepth) {
					t.Fatalf("we refuse what the oracle takes: %v", err)
				}
				// A wire type error is at a tag of that wire type.
				if errors.Is(err, ErrWireType) {
					_, wt, n := protowire.ConsumeTag(req[de.Offset:])
					if n < 0 || !strings.Contains(de.Detail, "wire type "+strconv.Itoa(int(wt))) {
						t.Fatalf("%v: not at a tag of that wire type", err)
					}
				}
			}
			return
		}
		if oracleErr != nil {
			t.Fatalf("we take what the oracle refuses (%v)", oracleErr)
		}
		got := canonViews(recordViews(recs))
		if o := canonViews(recordViews(recsO)); !slices.Equal(got, o) {
			t.Fatalf("referenced and owned differ:\n%v\n%v", got, o)
		}
		// Differential: record by record, in order. Duplicate keys in a
		// kvlist or attributes keep their first position and last value;
		// the views are Go maps, which have no order, and the oracle's
		// keep the last value too, so they compare equal.
		if want := canonViews(oracleViews(oracle)); !slices.Equal(got, want) {
			t.Fatalf("records differ from the oracle's:\n got %v\nwant %v", got, want)
		}
		// Round trip: the encoding (regrouped) holds the same records, for
		// the oracle and for us.
		var e OTLPEncoder
		out := e.AppendProto(nil, recs)
		back := &logs.LogsData{}
		if err := proto.Unmarshal(out, back); err != nil {
			t.Fatalf("the oracle refuses our encoding: %v", err)
		}
		set := flatten(recordViews(recs))
		if b := flatten(oracleViews(back)); !slices.Equal(b, set) {
			t.Fatalf("the encoding holds other records:\n got %v\nwant %v", b, set)
		}
		again, err := NewArena().DecodeOTLP(out, Referenced, nil)
		if err != nil {
			t.Fatalf("our encoding does not decode: %v", err)
		}
		if b := flatten(recordViews(again)); !slices.Equal(b, set) {
			t.Fatalf("the encoding decodes to other records:\n got %v\nwant %v", b, set)
		}
	})
}

// canonViews prints records' views with their times, in order, as Go
// syntax: %#v tells bytes from strings and an empty byte slice from nil,
// prints maps in key order, and NaN equal to itself.
func canonViews(views []map[string]any, times []int64) []string {
	out := make([]string, len(views))
	for i, v := range views {
		out[i] = fmt.Sprintf("%d %#v", times[i], v)
	}
	return out
}

// otlpSeeds are the hand-made part of FuzzDecodeOTLP's seed corpus, kept
// in testdata/fuzz/FuzzDecodeOTLP as seed-<name>: go test -run
// TestOTLPFuzzSeeds -update rewrites them. The fuzzer's findings sit next
// to them under their hashes.
func otlpSeeds(t testing.TB) map[string][]byte {
	unknown := pb{}.uint(90, 1).fix64(91, 2).str(92, "x").fix32(93, 3) // every wire type but groups
	res := pb{}.bytes(1, kvOf("service.name", pb{}.str(1, "svc"))).uint(2, 3).raw(unknown...)
	scope := pb{}.str(1, "lib").str(2, "1.0").bytes(3, kvOf("a", pb{}.uint(3, 1))).uint(4, 1).raw(unknown...)
	lr := pb{}.fix64(1, 5).uint(2, 9).str(3, "INFO").msg(5, pb{}.str(1, "b")).bytes(6, kvOf("k", pb{}.fix64(4, 0x3ff0000000000000))).
		uint(7, 2).fix32(8, 1).bytes(9, make([]byte, 16)).bytes(10, []byte{1, 2, 3, 4, 5, 6, 7, 8}).fix64(11, 4).str(12, "ev").raw(unknown...)
	rl := func(res, scope pb, lrs ...pb) pb {
		sl := pb{}.msg(1, scope)
		for _, l := range lrs {
			sl = sl.msg(2, l)
		}
		return pb{}.msg(1, pb{}.msg(1, res).msg(2, sl.str(3, "https://s").raw(unknown...)).str(3, "https://r").raw(unknown...))
	}
	seeds := map[string][]byte{
		"oracle-1":   marshalOracle(t, genOracleRequest(1, 5, 2)),
		"oracle-2":   marshalOracle(t, genOracleRequest(2, 12, 5)),
		"oracle-3":   marshalOracle(t, genOracleRequest(3, 1, 1)),
		"empty":      {},
		"empty-log":  emptyLogRecord,
		"all-fields": rl(res, scope, lr, lr),
		// Message fields sent twice merge: resource, scope, body, a
		// KeyValue's value, an AnyValue's array and kvlist.
		"merged": concat(rl(
			concat(res, pb{}.bytes(1, kvOf("b", pb{}.str(1, "x")))), scope,
			pb{}.msg(5, pb{}.msg(5, pb{}.msg(1, pb{}.uint(3, 1)))).msg(5, pb{}.msg(5, pb{}.msg(1, pb{}.uint(2, 1)))).
				bytes(6, pb{}.str(1, "k").msg(2, pb{}.msg(6, pb{}.bytes(1, kvOf("x", nil)))).msg(2, pb{}.msg(6, pb{}.bytes(1, kvOf("y", nil))))),
		)),
		// Another oneof member in between replaces: the body is [2].
		"oneof": rl(nil, nil, pb{}.msg(5, pb{}.msg(5, pb{}.msg(1, pb{}.uint(3, 1)))).msg(5, pb{}.str(1, "s")).msg(5, pb{}.msg(5, pb{}.msg(1, pb{}.uint(3, 2))))),
		"dup-keys": rl(pb{}.bytes(1, kvOf("a", pb{}.uint(3, 1))).bytes(1, kvOf("a", pb{}.uint(3, 2))), nil,
			pb{}.bytes(6, kvOf("x", nil)).bytes(6, kvOf("y", nil)).bytes(6, kvOf("x", pb{}.str(1, "last"))).
				msg(5, pb{}.msg(6, pb{}.bytes(1, kvOf("k", pb{}.uint(2, 1))).bytes(1, kvOf("k", pb{}.uint(2, 0)))))),
		// Doubles: -0, NaN, infinities; empty bytes, an empty AnyValue, a
		// KeyValue without a value, an empty kvlist and array.
		"values": rl(nil, nil, pb{}.bytes(6, kvOf("neg0", pb{}.fix64(4, 1<<63))).bytes(6, kvOf("nan", pb{}.fix64(4, 0x7ff8000000000001))).
			bytes(6, kvOf("inf", pb{}.fix64(4, 0x7ff0000000000000))).bytes(6, kvOf("b", pb{}.bytes(7, nil))).
			bytes(6, kvOf("empty", nil)).bytes(6, pb{}.str(1, "novalue")).bytes(6, kvOf("kv", pb{}.msg(6))).bytes(6, kvOf("arr", pb{}.msg(5))).
			bytes(6, kvOf("big", pb{}.uint(3, 1<<63))).uint(2, 1<<40).uint(7, 1<<33).msg(5)),
		// Resources and scopes equal but for -0 and 0, or for order.
		"regroup": concat(
			rl(pb{}.bytes(1, kvOf("z", pb{}.fix64(4, 0))), scope, lr),
			rl(pb{}.bytes(1, kvOf("z", pb{}.fix64(4, 1<<63))), scope, lr),
			rl(pb{}.bytes(1, kvOf("z", pb{}.fix64(4, 0))), scope, lr),
			rl(res, scope, lr), rl(concat(pb{}.uint(2, 3), res), scope, lr)),
		"time-unset":  rl(nil, nil, pb{}.fix64(11, 77), pb{}.fix64(1, 77).fix64(11, 77), pb{}.fix64(1, 0)),
		"deep-ok":     rl(nil, nil, pb{}.msg(5, nested(31, false))),
		"deep-bad":    rl(nil, nil, pb{}.msg(5, nested(32, true))),
		"group":       rl(nil, nil, pb{}.tag(20, 3).uint(1, 1).tag(20, 4)),
		"wrong-type":  rl(nil, nil, pb{}.uint(3, 1)),
		"id-length":   rl(nil, nil, pb{}.bytes(9, make([]byte, 15))),
		"bad-utf8":    rl(nil, nil, pb{}.bytes(6, kvOf("k\xff", nil))),
		"truncated":   marshalOracle(t, genOracleRequest(4, 2, 1))[:100],
		"field-zero":  pb{}.uint(0, 1),
		"overflow":    pb{}.tag(5, wireVarint).raw(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f),
		"reserved-wt": pb{}.tag(5, 6),
	}
	return seeds
}

func TestOTLPFuzzSeeds(t *testing.T) {
	for name, b := range otlpSeeds(t) {
		golden.Check(t, filepath.Join("testdata", "fuzz", "FuzzDecodeOTLP", "seed-"+name), fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b))
	}
}
