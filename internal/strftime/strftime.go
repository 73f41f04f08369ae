// Package strftime reads and writes times with strftime layouts, the one
// implementation behind parse_time and format_time on both backends and
// behind the os.date of Lua filter scripts.
package strftime

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// strftime layouts (semantics.md): %Y %m %d %H %M %S %y %b %B %a %A %j %e
// %I %p %Z %z %s %T %F %% and %L %f %N for fractions. Formatting and
// parsing are in UTC or in a zone (AppendFormatIn, ParseIn; Zone).

var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	dayNames   = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

func appendPad(dst []byte, v, width int, pad byte) []byte {
	var b [20]byte
	s := strconv.AppendInt(b[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, pad)
	}
	return append(dst, s...)
}

// AppendFormat appends t (unix nanoseconds) written with layout, in UTC.
func AppendFormat(dst []byte, ns int64, layout string) []byte {
	return appendTime(dst, time.Unix(0, ns).UTC(), layout, false)
}

// AppendFormatIn appends t (unix nanoseconds) written with layout as the
// wall time of loc: %Z is the zone's abbreviation then ("CET", "EDT",
// "+03"), %z its offset.
func AppendFormatIn(dst []byte, ns int64, layout string, loc *time.Location) []byte {
	return appendTime(dst, time.Unix(0, ns).In(loc), layout, false)
}

// AppendC appends t, in its own location, formatted as C's strftime does
// in the C locale (Lua's os.date): every conversion of C99 and the GNU
// ones glibc adds (%k %l %P %s), but not the fractions %L %f %N; the E and
// O modifiers are accepted and ignored, an unknown conversion is written
// as it is, as glibc does. %Y is not padded, as C's.
func AppendC(dst []byte, t time.Time, layout string) []byte {
	return appendTime(dst, t, layout, true)
}

// appendTime is AppendFormat's layouts or, with libc, AppendC's.
func appendTime(dst []byte, t time.Time, layout string, libc bool) []byte {
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c != '%' || i+1 == len(layout) {
			dst = append(dst, c)
			continue
		}
		i++
		c = layout[i]
		if libc && (c == 'E' || c == 'O') && i+1 < len(layout) {
			i++
			c = layout[i]
		}
		switch c {
		case 'Y':
			width := 4
			if libc {
				width = 1
			}
			dst = appendPad(dst, t.Year(), width, '0')
		case 'm':
			dst = appendPad(dst, int(t.Month()), 2, '0')
		case 'd':
			dst = appendPad(dst, t.Day(), 2, '0')
		case 'e':
			dst = appendPad(dst, t.Day(), 2, ' ')
		case 'H':
			dst = appendPad(dst, t.Hour(), 2, '0')
		case 'I':
			dst = appendPad(dst, hour12(t), 2, '0')
		case 'p':
			if t.Hour() < 12 {
				dst = append(dst, "AM"...)
			} else {
				dst = append(dst, "PM"...)
			}
		case 'M':
			dst = appendPad(dst, t.Minute(), 2, '0')
		case 'S':
			dst = appendPad(dst, t.Second(), 2, '0')
		case 'y':
			dst = appendPad(dst, ((t.Year()%100)+100)%100, 2, '0')
		case 'b':
			dst = append(dst, monthNames[t.Month()-1][:3]...)
		case 'B':
			dst = append(dst, monthNames[t.Month()-1]...)
		case 'a':
			dst = append(dst, dayNames[t.Weekday()][:3]...)
		case 'A':
			dst = append(dst, dayNames[t.Weekday()]...)
		case 'j':
			dst = appendPad(dst, t.YearDay(), 3, '0')
		case 'Z':
			name, _ := t.Zone()
			dst = append(dst, name...)
		case 'z':
			_, off := t.Zone()
			sign := byte('+')
			if off < 0 {
				sign, off = '-', -off
			}
			dst = append(dst, sign)
			dst = appendPad(dst, off/3600, 2, '0')
			dst = appendPad(dst, off%3600/60, 2, '0')
		case 's':
			dst = strconv.AppendInt(dst, t.Unix(), 10)
		case 'T':
			dst = appendTime(dst, t, "%H:%M:%S", libc)
		case 'F':
			dst = appendTime(dst, t, "%Y-%m-%d", libc)
		case 'L', 'f', 'N':
			if libc {
				dst = append(dst, '%', c)
				break
			}
			switch c {
			case 'L':
				dst = appendPad(dst, t.Nanosecond()/1e6, 3, '0')
			case 'f':
				dst = appendPad(dst, t.Nanosecond()/1e3, 6, '0')
			default:
				dst = appendPad(dst, t.Nanosecond(), 9, '0')
			}
		case '%':
			dst = append(dst, '%')
		default:
			if libc {
				dst = appendCOnly(dst, t, c)
			} else {
				dst = append(dst, '%', c)
			}
		}
	}
	return dst
}

// appendCOnly appends the conversions C has and format_time has not.
func appendCOnly(dst []byte, t time.Time, c byte) []byte {
	wd, yd := int(t.Weekday()), t.YearDay()-1
	switch c {
	case 'h':
		return append(dst, monthNames[t.Month()-1][:3]...)
	case 'c':
		return appendTime(dst, t, "%a %b %e %H:%M:%S %Y", true)
	case 'C':
		return appendPad(dst, floorDiv(t.Year(), 100), 2, '0')
	case 'D', 'x':
		return appendTime(dst, t, "%m/%d/%y", true)
	case 'g':
		y, _ := t.ISOWeek()
		return appendPad(dst, ((y%100)+100)%100, 2, '0')
	case 'G':
		y, _ := t.ISOWeek()
		return appendPad(dst, y, 1, '0')
	case 'k':
		return appendPad(dst, t.Hour(), 2, ' ')
	case 'l':
		return appendPad(dst, hour12(t), 2, ' ')
	case 'n':
		return append(dst, '\n')
	case 'P':
		if t.Hour() < 12 {
			return append(dst, "am"...)
		}
		return append(dst, "pm"...)
	case 'r':
		return appendTime(dst, t, "%I:%M:%S %p", true)
	case 'R':
		return appendTime(dst, t, "%H:%M", true)
	case 't':
		return append(dst, '\t')
	case 'X':
		return appendTime(dst, t, "%H:%M:%S", true)
	case 'u':
		return appendPad(dst, (wd+6)%7+1, 1, '0')
	case 'U':
		return appendPad(dst, (yd+7-wd)/7, 2, '0')
	case 'V':
		_, w := t.ISOWeek()
		return appendPad(dst, w, 2, '0')
	case 'w':
		return appendPad(dst, wd, 1, '0')
	case 'W':
		return appendPad(dst, (yd+7-(wd+6)%7)/7, 2, '0')
	}
	return append(dst, '%', c)
}

func hour12(t time.Time) int {
	if h := t.Hour() % 12; h != 0 {
		return h
	}
	return 12
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// timeParser holds the fields read so far.
type timeParser struct {
	s                         string
	year, month, day          int
	hour, min, sec, nsec      int
	yday                      int
	pm, hasPM, hour12         bool
	offset                    int // seconds east of UTC
	epoch                     int64
	hasEpoch, hasYday, hasDay bool
	hasZone                   bool // %z or %Z matched: offset holds
}

// num reads between min and max digits.
func (p *timeParser) num(min, max int) (int, bool) {
	n, v := 0, 0
	for n < max && n < len(p.s) && p.s[n] >= '0' && p.s[n] <= '9' {
		v = v*10 + int(p.s[n]-'0')
		n++
	}
	if n < min {
		return 0, false
	}
	p.s = p.s[n:]
	return v, true
}

func (p *timeParser) name(names []string) (int, bool) {
	for i, n := range names {
		for _, cand := range [2]string{n, n[:3]} {
			if len(p.s) >= len(cand) && strings.EqualFold(p.s[:len(cand)], cand) {
				p.s = p.s[len(cand):]
				return i, true
			}
		}
	}
	return 0, false
}

// Parse reads s with layout; false when s does not match all of it or the
// time is outside int64 nanoseconds. Without %z or %Z in the layout, the
// time is in UTC.
func Parse(s, layout string) (int64, bool) { return ParseIn(s, layout, time.UTC) }

// ParseIn is Parse with loc the zone of a time whose layout has no %z or
// %Z (or %s): its fields are a wall time of loc. A wall time that loc
// skips (in the hour a change to summer time jumps over) is moved forward
// by the jump, and one that it repeats (in the hour a change back goes
// through twice) is the first of the two: RFC 5545's rule, and
// JavaScript Temporal's "compatible" one (see WallTime).
func ParseIn(s, layout string, loc *time.Location) (int64, bool) {
	p := timeParser{s: s, year: 1970, month: 1, day: 1}
	if !p.parse(layout) || p.s != "" {
		return 0, false
	}
	if p.hasEpoch {
		return unixNanos(p.epoch, int64(p.nsec))
	}
	if p.hour12 {
		if p.hour < 1 || p.hour > 12 {
			return 0, false
		}
		p.hour %= 12
		if p.pm {
			p.hour += 12
		}
	}
	if p.month < 1 || p.month > 12 || p.day < 1 || p.day > 31 || p.hour > 23 || p.min > 59 || p.sec > 60 {
		return 0, false
	}
	var t time.Time
	if p.hasYday && !p.hasDay {
		if p.yday < 1 || p.yday > 366 {
			return 0, false
		}
		t = time.Date(p.year, 1, p.yday, p.hour, p.min, p.sec, p.nsec, time.UTC)
		if t.Year() != p.year {
			return 0, false // day 366 of a common year
		}
	} else {
		t = time.Date(p.year, time.Month(p.month), p.day, p.hour, p.min, p.sec, p.nsec, time.UTC)
		if t.Day() != p.day {
			return 0, false // February 30th
		}
	}
	sec := t.Unix() - int64(p.offset)
	if !p.hasZone && loc != time.UTC {
		sec = WallTime(t.Unix(), loc)
	}
	return unixNanos(sec, int64(t.Nanosecond()))
}

// WallTime returns the Unix seconds of the wall time w of loc, w being
// that wall time's fields read as UTC (time.Date(..., time.UTC).Unix()).
// Where loc's offset changes within a day of w, a w that the change skips
// is moved forward by the jump (read with the offset before it), and a w
// that it repeats is the earlier of its two instants.
func WallTime(w int64, loc *time.Location) int64 {
	const day = 86400
	before, after := offsetAt(w-day, loc), offsetAt(w+day, loc)
	if before == after {
		if o := offsetAt(w-before, loc); o == before {
			return w - before
		}
		// Two changes within a day: take what time.Date takes.
		t := time.Unix(w, 0).UTC()
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, loc).Unix()
	}
	ub, ua := w-before, w-after
	okB, okA := offsetAt(ub, loc) == before, offsetAt(ua, loc) == after
	switch {
	case okB && okA:
		return min(ub, ua)
	case okA:
		return ua
	}
	return ub // valid, or in a gap: moved forward
}

// offsetAt is loc's offset east of UTC, in seconds, at the Unix second u.
func offsetAt(u int64, loc *time.Location) int64 {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return int64(off)
}

// unixNanos converts seconds and nanoseconds to Unix nanoseconds; false when
// the time falls outside what an int64 of nanoseconds holds (about 1677 to
// 2262), where it would otherwise wrap to an unrelated date.
func unixNanos(sec, nsec int64) (int64, bool) {
	const limit = math.MaxInt64 / 1_000_000_000 // whole seconds
	if sec < -limit || sec > limit {
		return 0, false
	}
	n := sec*1e9 + nsec
	if (sec > 0 && n < 0) || (sec < 0 && n > 0) {
		return 0, false
	}
	return n, true
}

func (p *timeParser) parse(layout string) bool {
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c != '%' || i+1 == len(layout) {
			if p.s == "" || p.s[0] != c {
				return false
			}
			p.s = p.s[1:]
			continue
		}
		i++
		var ok bool
		switch layout[i] {
		case 'Y':
			p.year, ok = p.num(4, 4)
		case 'm':
			p.month, ok = p.num(1, 2)
		case 'd', 'e':
			if layout[i] == 'e' && p.s != "" && p.s[0] == ' ' {
				p.s = p.s[1:] // %e pads to two with a space
			}
			p.day, ok = p.num(1, 2)
			p.hasDay = true
		case 'H', 'I':
			p.hour, ok = p.num(1, 2)
			if layout[i] == 'I' {
				p.hour12 = true
			}
		case 'p':
			switch {
			case len(p.s) >= 2 && strings.EqualFold(p.s[:2], "AM"):
				ok = true
			case len(p.s) >= 2 && strings.EqualFold(p.s[:2], "PM"):
				ok, p.pm = true, true
			}
			if ok {
				p.s = p.s[2:]
			}
		case 'M':
			p.min, ok = p.num(1, 2)
		case 'S':
			p.sec, ok = p.num(1, 2)
		case 'y':
			var y int
			y, ok = p.num(2, 2)
			if y < 69 {
				p.year = 2000 + y
			} else {
				p.year = 1900 + y
			}
		case 'b', 'B':
			var mo int
			mo, ok = p.name(monthNames[:])
			p.month = mo + 1
		case 'a', 'A':
			_, ok = p.name(dayNames[:])
		case 'j':
			p.yday, ok = p.num(3, 3)
			p.hasYday = true
		case 'Z':
			switch {
			case strings.HasPrefix(p.s, "UTC"), strings.HasPrefix(p.s, "GMT"):
				p.s, ok = p.s[3:], true
			case strings.HasPrefix(p.s, "Z"):
				p.s, ok = p.s[1:], true
			}
			p.hasZone = true
		case 'z':
			ok = p.zone()
			p.hasZone = true
		case 's':
			neg := false
			if p.s != "" && (p.s[0] == '-' || p.s[0] == '+') {
				neg = p.s[0] == '-'
				p.s = p.s[1:]
			}
			n := 0
			for n < len(p.s) && n < 18 && p.s[n] >= '0' && p.s[n] <= '9' {
				n++
			}
			if n > 0 {
				e, _ := strconv.ParseInt(p.s[:n], 10, 64)
				if neg {
					e = -e
				}
				p.epoch, p.hasEpoch, ok = e, true, true
				p.s = p.s[n:]
			}
		case 'T':
			ok = p.parse("%H:%M:%S")
		case 'F':
			ok = p.parse("%Y-%m-%d")
		case 'L', 'f', 'N':
			n := 0
			v := 0
			for n < 9 && n < len(p.s) && p.s[n] >= '0' && p.s[n] <= '9' {
				v = v*10 + int(p.s[n]-'0')
				n++
			}
			if n > 0 {
				for k := n; k < 9; k++ {
					v *= 10
				}
				p.nsec, ok = v, true
				p.s = p.s[n:]
			}
		case '%':
			if p.s != "" && p.s[0] == '%' {
				p.s, ok = p.s[1:], true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// zone reads +hhmm, -hhmm, +hh:mm or Z.
func (p *timeParser) zone() bool {
	if strings.HasPrefix(p.s, "Z") {
		p.s = p.s[1:]
		return true
	}
	if p.s == "" || p.s[0] != '+' && p.s[0] != '-' {
		return false
	}
	sign := 1
	if p.s[0] == '-' {
		sign = -1
	}
	p.s = p.s[1:]
	h, ok := p.num(2, 2)
	if !ok {
		return false
	}
	if p.s != "" && p.s[0] == ':' {
		p.s = p.s[1:]
	}
	mi, ok := p.num(2, 2)
	if !ok || h > 23 || mi > 59 {
		return false
	}
	p.offset = sign * (h*3600 + mi*60)
	return true
}
