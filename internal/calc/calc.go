// Package calc holds what built-ins compute that both backends must
// compute alike (from_unix, round, floor, ceil, truncate, severity_number,
// the UUIDs): the VM calls it, and the Lua backend's Go helpers do.
package calc

import "math"

// FloorDiv is x / d rounded down (d > 0).
func FloorDiv(x, d int64) int64 {
	q := x / d
	if x%d < 0 {
		q--
	}
	return q
}

// UnixUnit is the nanoseconds of a unit of from_unix: s, ms, us or ns (the
// checker accepts nothing else).
func UnixUnit(unit string) int64 {
	switch unit {
	case "ms":
		return 1e6
	case "us":
		return 1e3
	case "ns":
		return 1
	}
	return 1e9
}

// FromUnixInt is the Unix nanoseconds of n units of unit nanoseconds,
// saturated at the ends of the int64 range.
func FromUnixInt(n, unit int64) int64 {
	switch {
	case n > math.MaxInt64/unit:
		return math.MaxInt64
	case n < math.MinInt64/unit:
		return math.MinInt64
	}
	return n * unit
}

// FromUnixFloat is the Unix nanoseconds nearest to n units of unit
// nanoseconds (the whole units exactly, the fraction rounded half away from
// zero), saturated at the ends of the int64 range.
func FromUnixFloat(n float64, unit int64) int64 {
	const limit = 9223372036854775808.0 // 2^63
	if x := n * float64(unit); x >= limit {
		return math.MaxInt64
	} else if x <= -limit {
		return math.MinInt64
	}
	whole := math.Trunc(n)
	ns := int64(whole)*unit + int64(math.Round((n-whole)*float64(unit)))
	// Rounding the fraction can step past an end of the range.
	if whole > 0 && ns < 0 {
		return math.MaxInt64
	} else if whole < 0 && ns > 0 {
		return math.MinInt64
	}
	return ns
}

// ToInt is the int of a whole float64 f, saturated at the ends of the
// int64 range (floor and ceil of floats beyond it).
func ToInt(f float64) int64 {
	switch {
	case f >= 9223372036854775808.0:
		return math.MaxInt64
	case f < -9223372036854775808.0:
		return math.MinInt64
	case f != f:
		return 0
	}
	return int64(f)
}

// Round is x rounded to digits decimal places (to tens, hundreds, ... for
// negative digits), halves away from zero: math.Round(x × 10^digits) /
// 10^digits. Digits beyond what a float64 holds leave x as it is; false
// when the result is not finite (rounding 1.7e308 up to a power of ten).
func Round(x float64, digits int64) (float64, bool) {
	switch {
	case digits == 0:
		return math.Round(x), true
	case digits > 0:
		if digits > 308 {
			return x, true
		}
		p := math.Pow10(int(digits))
		y := x * p
		if math.IsInf(y, 0) || math.Abs(y) >= 1<<52 {
			return x, true // no digits beyond these
		}
		return math.Round(y) / p, true
	}
	if digits < -308 {
		return 0 * x, true // 0, with x's sign
	}
	p := math.Pow10(int(-digits))
	r := math.Round(x/p) * p
	if math.IsInf(r, 0) {
		return r, false
	}
	return r, true
}

// Floor and Ceil are math.Floor and math.Ceil as ints (saturated).
func Floor(x float64) int64 { return ToInt(math.Floor(x)) }

// Ceil is math.Ceil as an int (saturated).
func Ceil(x float64) int64 { return ToInt(math.Ceil(x)) }
