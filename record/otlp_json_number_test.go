package record

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestJSONIntDigits holds jsonInt's path for plain digits to strconv, on
// valid JSON numbers (what jsonInt is given).
func TestJSONIntDigits(t *testing.T) {
	tests := []string{
		"0", "7", "10", "00", "0123", "1234567", "12345678", "123456789",
		"9999999999999999", "1700000000000000123", "9999999999999999999",
		"18446744073709551615", "18446744073709551616", "1234567.5", "12345678.0", "1e3", "-5", "-0",
	}
	for _, s := range tests {
		neg, mag, st := jsonInt([]byte(s))
		gneg, gmag, gst := jsonNumberInt([]byte(s))
		if neg != gneg || mag != gmag || st != gst {
			t.Errorf("jsonInt(%q) = %v, %d, %d; jsonNumberInt: %v, %d, %d", s, neg, mag, st, gneg, gmag, gst)
		}
		if want, err := strconv.ParseUint(s, 10, 64); isAllDigits(s) && err == nil && (mag != want || st != intOK) {
			t.Errorf("jsonInt(%q) = %d, %d; want %d", s, mag, st, want)
		}
	}
}

func isAllDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func TestEightDigits(t *testing.T) {
	// Every byte value at every place, among digits: only digits pass.
	base := []byte("31415926")
	for place := range 8 {
		for c := range 256 {
			b := append([]byte(nil), base...)
			b[place] = byte(c)
			v, ok := eightDigits(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
				uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
			want, err := strconv.ParseUint(string(b), 10, 64)
			if isDigit := c >= '0' && c <= '9'; ok != isDigit || ok && (err != nil || v != want) {
				t.Fatalf("eightDigits(%q) = %d, %v; want %d, %v", b, v, ok, want, isDigit)
			}
		}
	}
}

func FuzzJSONIntDigits(f *testing.F) {
	for _, s := range []string{"0", "1700000000000000123", "12345678", "9999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || !isAllDigits(s) || len(s) > 19 {
			return
		}
		_, mag, st := jsonInt([]byte(s))
		_, gmag, gst := jsonNumberInt([]byte(s))
		if mag != gmag || st != gst {
			t.Errorf("jsonInt(%q) = %d, %d; jsonNumberInt: %d, %d", s, mag, st, gmag, gst)
		}
	})
}

// TestQuickNumbers holds the one-pass readers of integers and doubles to
// the general path: each text, as an intValue and as a doubleValue, in a
// string and not, decodes the same with the quick readers as with them
// turned off, or fails with both.
func TestQuickNumbers(t *testing.T) {
	texts := []string{
		"0", "-0", "7", "42", "-42", "00", "01", "-01", "1234567890123456789", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "12345678901234567890", "1.5", "-2.25", "0.1",
		"255.237", "123456789012345", "1234567890123456", "0.000000000000001", "1.0000000000000001",
		"1e3", "1E-2", "1.", ".5", "-", "1.5e", "0x10", "1 ", "99999999999999999999999",
	}
	decode := func(kv string, quick bool) (string, error) {
		quickNumbers = quick
		defer func() { quickNumbers = true }()
		a := NewArena()
		recs, err := a.DecodeOTLPJSON([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[`+kv+`]}]}]}]}`), Owned, nil)
		if err != nil {
			return "", err
		}
		var e OTLPEncoder
		return string(e.AppendJSON(nil, recs)), nil
	}
	for _, text := range texts {
		for _, form := range []string{text, `"` + text + `"`} {
			for _, typ := range []string{"intValue", "doubleValue"} {
				kv := `{"key":"n","value":{"` + typ + `":` + form + `}}`
				q, qerr := decode(kv, true)
				g, gerr := decode(kv, false)
				if (qerr == nil) != (gerr == nil) || q != g {
					t.Errorf("%s: quick %s, %v; general %s, %v", kv, q, qerr, g, gerr)
				}
			}
		}
	}
}

// TestQuickDoubleRandom holds quickDouble to ParseFloat on random decimals
// of up to 15 digits.
func TestQuickDoubleRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		nd := 1 + r.IntN(15)
		digits := strconv.FormatUint(r.Uint64N(pow10u(nd)), 10)
		text := digits
		if frac := r.IntN(len(digits) + 1); frac > 0 && frac < len(digits) {
			text = digits[:len(digits)-frac] + "." + digits[len(digits)-frac:]
		}
		if r.IntN(2) == 0 {
			text = "-" + text
		}
		f, end, ok := quickDouble([]byte(text), 0)
		want, err := strconv.ParseFloat(text, 64)
		if !ok || err != nil || end != len(text) || math.Float64bits(f) != math.Float64bits(want) {
			t.Fatalf("quickDouble(%q) = %v, %d, %v; ParseFloat %v, %v", text, f, end, ok, want, err)
		}
	}
}

func pow10u(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}
