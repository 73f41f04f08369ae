package calc

// SeverityNumber is the OTLP severity number of a level name, as
// docs/language.md maps them, ASCII letters in any case; 0 when the name is
// none of them.
func SeverityNumber(s string) int64 {
	var b [13]byte // the longest name, "informational"
	if len(s) > len(b) {
		return 0
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	switch string(b[:len(s)]) {
	case "trace", "t":
		return 1
	case "debug", "d":
		return 5
	case "info", "information", "informational", "i":
		return 9
	case "notice":
		return 10
	case "warn", "warning", "w":
		return 13
	case "error", "err", "e":
		return 17
	case "crit", "critical":
		return 18
	case "alert":
		return 19
	case "fatal", "emerg", "emergency", "panic", "f":
		return 21
	}
	return 0
}
