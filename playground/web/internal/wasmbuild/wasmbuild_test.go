package wasmbuild

import (
	"bytes"
	"testing"
)

func TestSumRoundTrip(t *testing.T) {
	s := Sum{Go: "go1.26.8", Sources: "ab12", Wasm: "cd34", Size: 6446467}
	got, err := ParseSum(s.String())
	if err != nil || got != s {
		t.Errorf("ParseSum(String()) = %+v, %v; want %+v", got, err, s)
	}
	for _, bad := range []string{"", "go go1\nsources x\n", "go go1\nsources x\nwasm y 1\nextra\n"} {
		if _, err := ParseSum(bad); err == nil {
			t.Errorf("ParseSum(%q) took it", bad)
		}
	}
}

func TestGzipDeterministic(t *testing.T) {
	b := bytes.Repeat([]byte("\x00asm policyrun "), 1000)
	z1, z2 := Gzip(b), Gzip(append([]byte(nil), b...))
	if !bytes.Equal(z1, z2) {
		t.Error("Gzip gave two outputs for one input")
	}
	back, err := Gunzip(z1)
	if err != nil || !bytes.Equal(back, b) {
		t.Errorf("Gunzip(Gzip(b)): %v", err)
	}
}
