package config

import "testing"

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1000", 1000, true},
		{"32k", 32 << 10, true},
		{"32K", 32 << 10, true},
		{"64M", 64 << 20, true},
		{"5mb", 5 << 20, true},
		{"5MiB", 5 << 20, true},
		{"1G", 1 << 30, true},
		{"1gib", 1 << 30, true},
		{"100B", 100, true},
		{" 8 M ", 8 << 20, true},
		{"4611686018427387904", 1 << 62, true},
		{"4194304G", 1 << 52, true},
		{"4294967296G", 1 << 62, true},
		{"4294967297G", 0, false},
		{"4611686018427387905", 0, false},
		{"", 0, false},
		{"M", 0, false},
		{"lots", 0, false},
		{"-1", 0, false},
		{"-1K", 0, false},
		{"1.5M", 0, false},
		{"1T", 0, false},
		{"1KK", 0, false},
	} {
		got, ok := ParseSize(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
