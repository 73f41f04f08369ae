package strftime

import (
	"testing"
	"time"
)

func TestZone(t *testing.T) {
	for _, name := range []string{"UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Etc/GMT+5"} {
		if _, err := Zone(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"", "Local", "europe/paris", "Mars/Olympus", "../etc/passwd", "/etc/localtime"} {
		if _, err := Zone(name); err == nil {
			t.Errorf("%q: no error", name)
		}
	}
	a, _ := Zone("Europe/Paris")
	b, _ := Zone("Europe/Paris")
	if a != b {
		t.Error("Zone does not cache")
	}
	if n := testing.AllocsPerRun(100, func() { Zone("Europe/Paris") }); n != 0 {
		t.Errorf("a cached Zone allocates %.0f times", n)
	}
}

// TestParseIn: wall times of a zone, with the changes of offset resolved
// as RFC 5545 does.
func TestParseIn(t *testing.T) {
	const layout = "%Y-%m-%d %H:%M:%S"
	for _, tt := range []struct{ zone, in, want string }{
		{"America/New_York", "2026-06-01 12:00:00", "2026-06-01T16:00:00Z"},
		{"America/New_York", "2026-01-01 00:00:00", "2026-01-01T05:00:00Z"},
		{"America/New_York", "2026-03-08 02:30:00", "2026-03-08T07:30:00Z"}, // skipped: 03:30 EDT
		{"America/New_York", "2026-11-01 01:30:00", "2026-11-01T05:30:00Z"}, // repeated: the EDT one
		{"Europe/Berlin", "2026-03-29 02:30:00", "2026-03-29T01:30:00Z"},    // skipped: 03:30 CEST
		{"Europe/Berlin", "2026-10-25 02:30:00", "2026-10-25T00:30:00Z"},    // repeated: the CEST one
		{"Australia/Sydney", "2026-10-04 02:30:00", "2026-10-03T16:30:00Z"}, // skipped: 03:30 AEDT
		{"Australia/Sydney", "2026-04-05 02:30:00", "2026-04-04T15:30:00Z"}, // repeated: the AEDT one
		{"Asia/Kolkata", "2026-01-01 05:30:00", "2026-01-01T00:00:00Z"},
		{"UTC", "2026-01-01 05:30:00", "2026-01-01T05:30:00Z"},
	} {
		loc, err := Zone(tt.zone)
		if err != nil {
			t.Fatal(err)
		}
		ns, ok := ParseIn(tt.in, layout, loc)
		if got := time.Unix(0, ns).UTC().Format(time.RFC3339Nano); !ok || got != tt.want {
			t.Errorf("%s in %s: %s %v, want %s", tt.in, tt.zone, got, ok, tt.want)
		}
	}
	// An offset in the input wins over the zone; so do %Z and %s.
	paris, _ := Zone("Europe/Paris")
	for _, tt := range []struct{ in, layout, want string }{
		{"2026-06-01 12:00:00 +0000", layout + " %z", "2026-06-01T12:00:00Z"},
		{"2026-06-01 12:00:00 UTC", layout + " %Z", "2026-06-01T12:00:00Z"},
		{"1700000000", "%s", "2023-11-14T22:13:20Z"},
	} {
		ns, ok := ParseIn(tt.in, tt.layout, paris)
		if got := time.Unix(0, ns).UTC().Format(time.RFC3339Nano); !ok || got != tt.want {
			t.Errorf("%s: %s %v, want %s", tt.in, got, ok, tt.want)
		}
	}
}

func TestAppendFormatIn(t *testing.T) {
	ns := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	for _, tt := range []struct{ zone, want string }{
		{"UTC", "2026-07-01 12:00:00 UTC +0000"},
		{"Europe/Paris", "2026-07-01 14:00:00 CEST +0200"},
		{"America/New_York", "2026-07-01 08:00:00 EDT -0400"},
		{"Asia/Kolkata", "2026-07-01 17:30:00 IST +0530"},
	} {
		loc, _ := Zone(tt.zone)
		if got := string(AppendFormatIn(nil, ns, "%Y-%m-%d %H:%M:%S %Z %z", loc)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.zone, got, tt.want)
		}
	}
}
