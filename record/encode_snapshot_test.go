package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/golden"
)

// The JSON encoder's output is pinned by testdata/encode.golden, taken
// from the encoder before it was optimised: changes to appendQuoted and the
// walk must keep it byte for byte. Regenerate with -update only for an
// intended change of output.

// snapshotLines is the corpus of JSON lines whose re-encoding is pinned:
// the FuzzDecodeJSON seeds, the round-trip lines and any saved fuzz inputs.
func snapshotLines(t *testing.T) []string {
	lines := []string{
		b2JSON, editInput, fieldsJSON(40), fieldsJSON(128), `{}`, `{"a":1,"a":2}`, `{"a":"\ud83d\ude00\ud800"}`,
		`{"n":18446744073709551616,"f":1e-400,"g":-0.0,"h":1E+2}`, `{"a":[[[[]]]],"b":{"c":{}}}`,
		`{"a":1}` + "\n", `{"k":"\\\"\/\b\f\n\r\t\u0000"}`,
		`{"level":"info","msg":"GET /a \"q\" \\ \t done","status":200,"latency":0.25,"ok":true,"x":null}`,
		`{"f1":1.0,"f2":-0.0,"f3":1e21,"f4":1.5e-7,"f5":123456789.125,"i":-9223372036854775808}`,
		`{"u":"\u00e9\u4e2d\ud83d\ude00 ünïcödé \u0001\u001f\u007f\u2028"}`,
		"  {\"spaces\" : [ 1 , 2 ] }  \r\n",
	}
	// Saved fuzz inputs are optional: there may be none.
	files, err := filepath.Glob("testdata/fuzz/FuzzDecodeJSON/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The corpus file format: a header line, then []byte("...").
		for _, l := range strings.Split(string(b), "\n") {
			if s, ok := strings.CutPrefix(l, "[]byte("); ok {
				if q, err := strconv.Unquote(strings.TrimSuffix(s, ")")); err == nil {
					lines = append(lines, q)
				}
			}
		}
	}
	return lines
}

// genValue returns a random value of depth at most depth, with the strings
// a policy could make: control characters, quotes, backslashes, multi-byte
// and broken UTF-8, runs longer than a word.
func genValue(a *Arena, rng *rand.Rand, depth int) Value {
	k := rng.IntN(10)
	if depth <= 0 && k >= 8 {
		k = rng.IntN(8)
	}
	switch k {
	case 0:
		return NullValue()
	case 1:
		return BoolValue(rng.IntN(2) == 1)
	case 2:
		switch rng.IntN(3) {
		case 0:
			return IntValue(rng.Int64())
		case 1:
			return IntValue(-rng.Int64N(1000))
		}
		return IntValue(rng.Int64N(100000))
	case 3:
		return FloatValue(genFloat(rng))
	case 4, 5:
		return a.NewString(genString(rng))
	case 6:
		return a.NewBytes(genString(rng))
	case 7:
		return TimestampValue(rng.Int64N(4e18) - 1e18)
	case 8:
		b := a.BeginArray(0)
		for n := rng.IntN(5); n > 0; n-- {
			b.Append(genValue(a, rng, depth-1))
		}
		return b.Finish()
	}
	b := a.BeginMap(0)
	for n := rng.IntN(7); n > 0; n-- {
		b.Add(a.NewString(genString(rng)), genValue(a, rng, depth-1))
	}
	return b.Finish()
}

func genFloat(rng *rand.Rand) float64 {
	switch rng.IntN(8) {
	case 0:
		return []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1),
			math.SmallestNonzeroFloat64, math.MaxFloat64, 1e21, 1e-6, 1e20, 9.999999e-7}[rng.IntN(11)]
	case 1:
		return math.Float64frombits(rng.Uint64())
	case 2:
		return float64(rng.Int64N(1e6)) / 1000
	}
	return (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(60)-30))
}

func genString(rng *rand.Rand) []byte {
	pieces := []string{"a", "level", "GET /api/v1/orders", " ", "\"", "\\", "\n", "\t", "\r", "\x00",
		"\x1f", "\x7f", "é", "中", "😀", "\u2028", "\xff", "\xe4\xb8", "\xed\xa0\x80", "/", "<>&",
		"abcdefghijklmnopqrstuvwxyz0123456789", "\b\f"}
	var b []byte
	for n := rng.IntN(8); n > 0; n-- {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return b
}

// snapshotOutput encodes the corpus (with the value encoder, never a
// pass-through) and n generated values, one output a line.
func snapshotOutput(t *testing.T, n int) []byte {
	var out []byte
	a := NewArena()
	for _, l := range snapshotLines(t) {
		r, err := a.DecodeJSON([]byte(l), Owned)
		if err != nil {
			continue
		}
		out = a.AppendJSON(out, r.Root())
		out = append(out, '\n')
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		out = a.AppendJSON(out, genValue(a, rng, 3))
		out = append(out, '\n')
	}
	return out
}

func TestEncodeSnapshot(t *testing.T) {
	lines := snapshotOutput(t, 300)
	// Many more generated values are pinned by a digest only.
	sum := sha256.Sum256(snapshotOutput(t, 20000))
	golden.Check(t, "testdata/encode.golden", append(lines, "sha256 "+hex.EncodeToString(sum[:])+"\n"...))
}

func TestAppendFloatFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(f float64) {
		t.Helper()
		if got, want := AppendFloat(nil, f), appendFloatStrconv(nil, f); !bytes.Equal(got, want) {
			t.Fatalf("%v (%#x): got %s, want %s", f, math.Float64bits(f), got, want)
		}
	}
	for _, f := range []float64{1e-6, 9.99999e-7, 1e-5, 0.001, 0.1, 0.5, 1, 10, 12.5, 1810.542, 1e9, 999999999.999999,
		1e9 + 0.5, 1e12, 1e12 + 0.001, 999999999999.999, 1e15, 1e15 - 1, 1e15 - 0.125, 123456789012.345, 0.3, 2.675} {
		check(f)
		check(-f)
		check(math.Nextafter(f, 0))
		check(math.Nextafter(f, 2e15))
	}
	for i := 0; i < 200000; i++ {
		// Decimals of 1 to 17 digits with 0 to 9 of them after the point,
		// and their neighbours, which are not short decimals.
		digits, frac := 1+rng.IntN(17), rng.IntN(10)
		m := rng.Int64N(int64(math.Pow10(digits)))
		f := float64(m) / math.Pow10(frac)
		check(f)
		check(math.Nextafter(f, math.Inf(1)))
		check(math.Float64frombits(rng.Uint64()))
	}
}
