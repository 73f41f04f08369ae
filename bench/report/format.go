package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/policyrun/policyrun/bench"
)

// statCell is a Stat as a table cell: "1.23 (1.20–1.31)", or the median
// alone for a single value.
func statCell(s bench.Stat) string {
	if s.N == 0 {
		return "—"
	}
	if s.N == 1 || s.Min == s.Max {
		return fmtNum(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
}

// fmtNum formats a measurement with about three significant digits and no
// exponent: 12,345 · 123 · 12.3 · 1.23 · 0.0123.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case a >= 1000:
		return groupThousands(fmt.Sprintf("%.0f", v))
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		digits := 2 - int(math.Floor(math.Log10(a)))
		return fmt.Sprintf("%.*f", min(digits, 9), v)
	}
}

// groupThousands puts commas in the integer s ("-1234567" → "-1,234,567").
func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b bytes.Buffer
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
