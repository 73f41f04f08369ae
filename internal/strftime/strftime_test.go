package strftime

import (
	"strings"
	"testing"
	"time"
)

func TestFormatParse(t *testing.T) {
	ns := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC).UnixNano()
	for _, tt := range []struct{ layout, want string }{
		{"%Y-%m-%dT%H:%M:%S.%LZ", "2026-01-02T03:04:05.006Z"},
		{"%F %T", "2026-01-02 03:04:05"},
		{"%d/%b/%Y:%H:%M:%S %z", "02/Jan/2026:03:04:05 +0000"},
		{"%A %B %e %I%p %j %s", "Friday January  2 03AM 002 1767323045"},
	} {
		got := string(AppendFormat(nil, ns, tt.layout))
		if got != tt.want {
			t.Errorf("AppendFormat(%q) = %q, want %q", tt.layout, got, tt.want)
		}
		want := ns - ns%int64(time.Second) // layouts without a fraction keep whole seconds
		if strings.Contains(tt.layout, "%L") {
			want = ns
		}
		if back, ok := Parse(got, tt.layout); !ok || back != want {
			t.Errorf("Parse(%q, %q) = %d, %v; want %d", got, tt.layout, back, ok, want)
		}
	}
	for _, bad := range [][2]string{{"2026-13-01", "%Y-%m-%d"}, {"2026-01-01x", "%Y-%m-%d"}, {"0001-01-01", "%Y-%m-%d"}} {
		if _, ok := Parse(bad[0], bad[1]); ok {
			t.Errorf("Parse(%q, %q) succeeded", bad[0], bad[1])
		}
	}
}

// FuzzTimeRoundTrip checks that format_time and parse_time are inverse
// over a layout that keeps every field.
func FuzzTimeRoundTrip(f *testing.F) {
	for _, ns := range []int64{0, 1709211909123456789, -1000000, 9_000_000_000_000_000_000, -9_000_000_000_000_000_000} {
		f.Add(ns)
	}
	const layout = "%Y-%m-%dT%H:%M:%S.%N%z"
	f.Fuzz(func(t *testing.T, ns int64) {
		y := time.Unix(0, ns).UTC().Year()
		if y < 0 || y > 9999 {
			return
		}
		s := string(AppendFormat(nil, ns, layout))
		got, ok := Parse(s, layout)
		if !ok || got != ns {
			t.Fatalf("%d -> %q -> %d, %v", ns, s, got, ok)
		}
	})
}
