package record

import (
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
