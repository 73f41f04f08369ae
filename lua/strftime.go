package lua

import (
	"math"
	"strconv"
	"strings"
	"time"
)

var (
	shortMonths = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	longMonths  = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	shortDays   = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	longDays    = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

func pad(b []byte, n int64, width int, c byte) []byte {
	s := strconv.FormatInt(n, 10)
	for i := len(s); i < width; i++ {
		b = append(b, c)
	}
	return append(b, s...)
}

// formatTime writes the time t (unix nanoseconds) in UTC with a strftime
// layout (docs/semantics.md).
func formatTime(ns int64, layout string) string {
	t := time.Unix(0, ns).UTC()
	var b []byte
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c != '%' || i+1 >= len(layout) {
			b = append(b, c)
			continue
		}
		i++
		switch layout[i] {
		case 'Y':
			b = pad(b, int64(t.Year()), 4, '0')
		case 'm':
			b = pad(b, int64(t.Month()), 2, '0')
		case 'd':
			b = pad(b, int64(t.Day()), 2, '0')
		case 'e':
			b = pad(b, int64(t.Day()), 2, ' ')
		case 'H':
			b = pad(b, int64(t.Hour()), 2, '0')
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b = pad(b, int64(h), 2, '0')
		case 'p':
			if t.Hour() < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'M':
			b = pad(b, int64(t.Minute()), 2, '0')
		case 'S':
			b = pad(b, int64(t.Second()), 2, '0')
		case 'y':
			b = pad(b, int64(t.Year()%100), 2, '0')
		case 'b':
			b = append(b, shortMonths[t.Month()-1]...)
		case 'B':
			b = append(b, longMonths[t.Month()-1]...)
		case 'a':
			b = append(b, shortDays[t.Weekday()]...)
		case 'A':
			b = append(b, longDays[t.Weekday()]...)
		case 'j':
			b = pad(b, int64(t.YearDay()), 3, '0')
		case 'Z':
			b = append(b, "UTC"...)
		case 'z':
			b = append(b, "+0000"...)
		case 's':
			b = strconv.AppendInt(b, t.Unix(), 10)
		case 'T':
			b = pad(b, int64(t.Hour()), 2, '0')
			b = append(b, ':')
			b = pad(b, int64(t.Minute()), 2, '0')
			b = append(b, ':')
			b = pad(b, int64(t.Second()), 2, '0')
		case 'F':
			b = pad(b, int64(t.Year()), 4, '0')
			b = append(b, '-')
			b = pad(b, int64(t.Month()), 2, '0')
			b = append(b, '-')
			b = pad(b, int64(t.Day()), 2, '0')
		case 'L':
			b = pad(b, int64(t.Nanosecond()/1e6), 3, '0')
		case 'f':
			b = pad(b, int64(t.Nanosecond()/1e3), 6, '0')
		case 'N':
			b = pad(b, int64(t.Nanosecond()), 9, '0')
		case '%':
			b = append(b, '%')
		default:
			b = append(b, '%', layout[i])
		}
	}
	return string(b)
}

// timeParser holds the fields parse_time has read so far.
type timeParser struct {
	s                    string
	year, month, day     int
	hour, min, sec, nsec int
	yday                 int
	pm, hasPM, hour12    bool
	offset               int // seconds east of UTC
	epoch                int64
	hasEpoch, hasDay     bool
}

func (p *timeParser) num(min, max int) (int, bool) {
	i := 0
	for i < len(p.s) && i < max && p.s[i] >= '0' && p.s[i] <= '9' {
		i++
	}
	if i < min {
		return 0, false
	}
	n, _ := strconv.Atoi(p.s[:i])
	p.s = p.s[i:]
	return n, true
}

func (p *timeParser) word(list []string) (int, bool) {
	for i, w := range list {
		if len(p.s) >= len(w) && strings.EqualFold(p.s[:len(w)], w) {
			p.s = p.s[len(w):]
			return i, true
		}
	}
	return 0, false
}

func (p *timeParser) lit(x string) bool {
	if !strings.HasPrefix(p.s, x) {
		return false
	}
	p.s = p.s[len(x):]
	return true
}

// parseTime reads s with a strftime layout and returns unix nanoseconds;
// the whole of s must match.
func parseTime(s, layout string) (int64, bool) {
	p := &timeParser{s: s, year: 1970, month: 1, day: 1}
	if !p.layout(layout) || p.s != "" {
		return 0, false
	}
	if p.hasEpoch {
		return unixNanos(p.epoch, int64(p.nsec))
	}
	h := p.hour
	if p.hour12 {
		if h < 1 || h > 12 {
			return 0, false
		}
		h %= 12
		if p.pm {
			h += 12
		}
	}
	if p.month < 1 || p.month > 12 || p.day < 1 || p.day > 31 || h > 23 || p.min > 59 || p.sec > 60 {
		return 0, false
	}
	var t time.Time
	if p.yday > 0 && !p.hasDay {
		t = time.Date(p.year, 1, 1, h, p.min, p.sec, p.nsec, time.UTC).AddDate(0, 0, p.yday-1)
		if t.Year() != p.year {
			return 0, false // day 366 of a common year
		}
	} else {
		t = time.Date(p.year, time.Month(p.month), p.day, h, p.min, p.sec, p.nsec, time.UTC)
		if t.Day() != p.day {
			return 0, false // February 30th and the like
		}
	}
	return unixNanos(t.Unix()-int64(p.offset), int64(t.Nanosecond()))
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

func (p *timeParser) layout(layout string) bool {
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c != '%' || i+1 >= len(layout) {
			if !p.lit(string(c)) {
				return false
			}
			continue
		}
		i++
		var ok bool
		switch layout[i] {
		case 'Y':
			p.year, ok = p.num(4, 4)
		case 'm':
			p.month, ok = p.num(1, 2)
		case 'd':
			p.day, ok = p.num(1, 2)
			p.hasDay = true
		case 'e':
			p.lit(" ")
			p.day, ok = p.num(1, 2)
			p.hasDay = true
		case 'H':
			p.hour, ok = p.num(1, 2)
		case 'I':
			p.hour, ok = p.num(1, 2)
			p.hour12 = true
		case 'p':
			var k int
			k, ok = p.word([]string{"AM", "PM"})
			p.pm = k == 1
			p.hour12 = true
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
		case 'b':
			var m int
			m, ok = p.word(shortMonths)
			p.month = m + 1
		case 'B':
			var m int
			m, ok = p.word(longMonths)
			if !ok {
				m, ok = p.word(shortMonths)
			}
			p.month = m + 1
		case 'a':
			_, ok = p.word(shortDays)
		case 'A':
			_, ok = p.word(longDays)
			if !ok {
				_, ok = p.word(shortDays)
			}
		case 'j':
			p.yday, ok = p.num(3, 3)
			ok = ok && p.yday >= 1 && p.yday <= 366
		case 'Z':
			ok = p.lit("UTC") || p.lit("GMT") || p.lit("Z")
		case 'z':
			ok = p.zone()
		case 's':
			neg := p.lit("-")
			if !neg {
				p.lit("+")
			}
			i := 0
			for i < len(p.s) && p.s[i] >= '0' && p.s[i] <= '9' {
				i++
			}
			if i == 0 {
				return false
			}
			n, err := strconv.ParseInt(p.s[:i], 10, 64)
			if err != nil {
				return false
			}
			p.s = p.s[i:]
			if neg {
				n = -n
			}
			p.epoch, p.hasEpoch, ok = n, true, true
		case 'T':
			ok = p.layout("%H:%M:%S")
		case 'F':
			ok = p.layout("%Y-%m-%d")
		case 'L', 'f', 'N':
			i := 0
			for i < len(p.s) && i < 9 && p.s[i] >= '0' && p.s[i] <= '9' {
				i++
			}
			if i == 0 {
				return false
			}
			n, _ := strconv.Atoi(p.s[:i])
			for j := i; j < 9; j++ {
				n *= 10
			}
			p.nsec, p.s, ok = n, p.s[i:], true
		case '%':
			ok = p.lit("%")
		default:
			ok = p.lit("%" + string(layout[i]))
		}
		if !ok {
			return false
		}
	}
	return true
}

// zone reads a numeric offset: Z, +hhmm, +hh:mm or +hh.
func (p *timeParser) zone() bool {
	if p.lit("Z") {
		p.offset = 0
		return true
	}
	if len(p.s) == 0 || p.s[0] != '+' && p.s[0] != '-' {
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
	p.lit(":")
	m := 0
	if len(p.s) >= 2 && p.s[0] >= '0' && p.s[0] <= '9' {
		m, _ = p.num(2, 2)
	}
	if h > 23 || m > 59 {
		return false
	}
	p.offset = sign * (h*3600 + m*60)
	return true
}
