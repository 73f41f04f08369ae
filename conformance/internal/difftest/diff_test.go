package difftest

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/backend"
)

// backends are the backends held to agree: every registered one.
var backends = backend.All()

// pairs runs policy seeds [from, from+n) on records each and compares the
// backends.
func pairs(t testing.TB, from, n uint64, records int) int {
	checked := 0
	for seed := from; seed < from+n; seed++ {
		src := Policy(seed)
		f, info, _, ok := parseCheck(src)
		if !ok {
			continue
		}
		checked++
		recs := make([][]byte, records)
		for i := range recs {
			recs[i] = Record(seed*1000 + uint64(i))
		}
		if err := Compare(f, info, src, backends, recs); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	return checked
}

// TestDifferential is the fixed-seed run: 330 policies × 20 records, of
// which about 270 of them check (over 5,000 pairs).
func TestDifferential(t *testing.T) {
	n := pairs(t, 0, 330, 20)
	if n*20 < 5000 {
		t.Errorf("only %d policy×record pairs", n*20)
	}
	t.Logf("%d policies × 20 records = %d pairs on %d backends", n, n*20, len(backends))
	// Some of them split an array, whose records are compared one by one.
	splits := 0
	for seed := uint64(0); seed < 330; seed++ {
		if src := Policy(seed); strings.Contains(src, "\nsplit .") {
			if _, _, _, ok := parseCheck(src); ok {
				splits++
			}
		}
	}
	if splits < 30 {
		t.Errorf("only %d policies that check split", splits)
	}
	t.Logf("%d of them split", splits)
}

func FuzzDifferential(f *testing.F) {
	for _, s := range []uint64{1, 7, 42, 1000, 123456} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		pairs(t, seed, 1, 8)
	})
}

// otlpPairs runs OTLP policy seeds [from, from+n) on records views each,
// one by one, and on a request of group records sharing resources and
// scopes, and compares the backends. It returns the number of policies
// that check and of records compared.
func otlpPairs(t testing.TB, from, n uint64, records, group int) (policies, pairs int) {
	for seed := from; seed < from+n; seed++ {
		src := OTLPPolicy(seed)
		f, info, _, ok := parseCheck(src)
		if !ok {
			continue
		}
		policies++
		body := OTLPBody(seed)
		recs := make([][]byte, records)
		for i := range recs {
			recs[i] = OTLPRecord(seed*1000+uint64(i), body)
		}
		if err := Compare(f, info, src, backends, recs); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := CompareOTLPRequest(f, info, src, backends, OTLPGroup(seed, body, group)); err != nil {
			t.Fatalf("seed %d, its request: %v", seed, err)
		}
		pairs += records + group
	}
	return policies, pairs
}

// TestDifferentialOTLP is the fixed-seed run of OTLP policies: 200
// policies × (20 records one by one + a request of 8), of which about 170
// check (over 4,000 pairs).
func TestDifferentialOTLP(t *testing.T) {
	n, pairs := otlpPairs(t, 0, 200, 20, 8)
	if pairs < 4000 {
		t.Errorf("only %d policy×record pairs (%d policies check)", pairs, n)
	}
	t.Logf("%d policies × 28 records = %d pairs on %d backends", n, pairs, len(backends))
}

func FuzzDifferentialOTLP(f *testing.F) {
	for _, s := range []uint64{1, 7, 42, 1000, 123456} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		otlpPairs(t, seed, 1, 6, 2+int(seed%7))
	})
}

// TestDifferentialFuncs runs policies that declare functions and call
// them with random arguments: the VM's inlined bodies and the Lua
// backend's functions must agree.
func TestDifferentialFuncs(t *testing.T) {
	checked, calls, layout := 0, 0, 0
	for seed := uint64(0); seed < 200; seed++ {
		src := FuncPolicy(seed)
		f, info, _, ok := parseCheck(src)
		if !ok {
			continue
		}
		checked++
		calls += len(info.Funcs)
		for _, fn := range info.Funcs {
			if len(fn.ConstParams) > 0 {
				layout++ // a call of z1 or z2 (layoutFuncs)
			}
		}
		recs := make([][]byte, 10)
		for i := range recs {
			recs[i] = Record(seed*1000 + uint64(i))
		}
		if err := Compare(f, info, src, backends, recs); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if checked < 100 || calls < 200 || layout < 50 {
		t.Errorf("only %d of 200 policies check, with %d calls (%d with zone, unit and format parameters)", checked, calls, layout)
	}
	t.Logf("%d policies with %d calls (%d with zone, unit and format parameters) × 10 records on %d backends", checked, calls, layout, len(backends))
}

func FuzzDifferentialFuncs(f *testing.F) {
	for _, s := range []uint64{1, 7, 42, 1000} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		src := FuncPolicy(seed)
		pf, info, _, ok := parseCheck(src)
		if !ok {
			return
		}
		recs := make([][]byte, 8)
		for i := range recs {
			recs[i] = Record(seed*1000 + uint64(i))
		}
		if err := Compare(pf, info, src, backends, recs); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	})
}
