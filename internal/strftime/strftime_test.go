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

// TestFormatDialects: format_time keeps to its own layouts (a conversion
// only C has is written as it is), os.date's AppendC to C's (the
// fractions are not C's).
func TestFormatDialects(t *testing.T) {
	tm := time.Date(2026, 1, 2, 15, 4, 5, 6_000_000, time.FixedZone("EST", -5*3600))
	for _, tt := range []struct{ layout, policy, c string }{
		{"%c", "%c", "Fri Jan  2 15:04:05 2026"},
		{"%D %R %r", "%D %R %r", "01/02/26 15:04 03:04:05 PM"},
		{"%Ey %Od", "%Ey %Od", "26 02"},
		{"%k|%l|%P|%h|%C|%u|%w|%U|%W|%V|%G|%g", "%k|%l|%P|%h|%C|%u|%w|%U|%W|%V|%G|%g", "15| 3|pm|Jan|20|5|5|00|00|01|2026|26"},
		{"%L %f %N", "006 006000 006000000", "%L %f %N"},
		{"%Z %z", "UTC +0000", "EST -0500"},
		{"%Y %y %T %F %s %%", "2026 26 20:04:05 2026-01-02 1767384245 %", "2026 26 15:04:05 2026-01-02 1767384245 %"},
		{"%Q%", "%Q%", "%Q%"},
	} {
		if got := string(AppendFormat(nil, tm.UnixNano(), tt.layout)); got != tt.policy {
			t.Errorf("AppendFormat(%q) = %q, want %q", tt.layout, got, tt.policy)
		}
		if got := string(AppendC(nil, tm, tt.layout)); got != tt.c {
			t.Errorf("AppendC(%q) = %q, want %q", tt.layout, got, tt.c)
		}
	}
	if got := string(AppendC(nil, time.Date(50, 3, 1, 0, 0, 0, 0, time.UTC), "%Y|%C|%y")); got != "50|00|50" {
		t.Errorf("AppendC of year 50 = %q, want C's unpadded year", got)
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
