package logparse

import (
	"strings"
	"time"

	"github.com/policyrun/policyrun/internal/strftime"
)

// Facilities and Severities are the names parse_syslog gives, by number
// (RFC 5424 §6.2.1, named as VRL's parse_syslog names them).
var (
	Facilities = [24]string{"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
		"uucp", "cron", "authpriv", "ftp", "ntp", "audit", "alert", "clockd",
		"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}
	Severities = [8]string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}
)

// syslogMsg is a checked syslog line.
type syslogMsg struct {
	pri, version                     int // -1 when absent
	hasTime                          bool
	time                             int64
	hostname, appname, procid, msgid string // "" when absent
	sd                               string // the structured data, checked; "" when absent
	message                          string
}

// Syslog is parse_syslog(s): an RFC 5424 or RFC 3164 line
// (docs/semantics.md). now is the time of the run, whose year an RFC 3164
// timestamp (which has none) takes. It reports false, calling nothing,
// when s is neither. buf is scratch for unescaped values, returned grown.
func Syslog(s string, now int64, out Sink, buf []byte) ([]byte, bool) {
	m, ok := parseSyslog(s, now)
	if !ok {
		return buf, false
	}
	if m.pri >= 0 {
		out.Str("facility", Facilities[m.pri>>3])
		out.Str("severity", Severities[m.pri&7])
	}
	if m.version >= 0 {
		out.Int("version", int64(m.version))
	}
	if m.hasTime {
		out.Time("timestamp", m.time)
	}
	if m.hostname != "" {
		out.Str("hostname", m.hostname)
	}
	if m.appname != "" {
		out.Str("appname", m.appname)
	}
	if m.procid != "" {
		if numOrDash(m.procid) {
			out.Int("procid", atoi(m.procid))
		} else {
			out.Str("procid", m.procid)
		}
	}
	if m.msgid != "" {
		out.Str("msgid", m.msgid)
	}
	for sd := m.sd; sd != ""; {
		var id, params string
		id, params, sd = sdElement(sd)
		if fixedKey(id) {
			continue
		}
		out.BeginMap(id)
		for params != "" {
			var name, val string
			name, val, params = sdParam(params)
			if strings.IndexByte(val, '\\') < 0 {
				out.Str(name, val)
				continue
			}
			buf = buf[:0]
			for i := 0; i < len(val); i++ {
				c := val[i]
				if c == '\\' && i+1 < len(val) && (val[i+1] == '"' || val[i+1] == '\\' || val[i+1] == ']') {
					i++
					c = val[i]
				}
				buf = append(buf, c)
			}
			out.Str(name, str(buf))
		}
		out.EndMap()
	}
	out.Str("message", m.message)
	return buf, true
}

// fixedKey reports whether k is one of parse_syslog's own keys, which an
// SD-ID of the same name does not replace.
func fixedKey(k string) bool {
	switch k {
	case "facility", "severity", "version", "timestamp", "hostname", "appname", "procid", "msgid", "message":
		return true
	}
	return false
}

func parseSyslog(s string, now int64) (syslogMsg, bool) {
	m := syslogMsg{pri: -1, version: -1}
	rest := s
	if strings.HasPrefix(rest, "<") {
		j := strings.IndexByte(rest, '>')
		if j < 2 || j > 4 {
			return m, false
		}
		p := rest[1:j]
		if !numOrDash(p) || p == "-" || len(p) > 1 && p[0] == '0' {
			return m, false
		}
		if m.pri = int(atoi(p)); m.pri > 191 {
			return m, false
		}
		rest = rest[j+1:]
		// RFC 5424: a version, 1 to 3 digits, then a space.
		if i := strings.IndexByte(rest, ' '); i > 0 && i <= 3 && rest[0] != '0' && numOrDash(rest[:i]) && rest[:i] != "-" {
			m.version = int(atoi(rest[:i]))
			return m, m.rfc5424(rest[i+1:])
		}
	}
	return m, m.rfc3164(rest, now)
}

// rfc5424 reads TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD [MSG], the
// fields up to SD each "-" when nil.
func (m *syslogMsg) rfc5424(s string) bool {
	var f [5]string
	for i := range f {
		j := strings.IndexByte(s, ' ')
		if j <= 0 {
			return false
		}
		f[i], s = s[:j], s[j+1:]
		if !printable(f[i]) {
			return false
		}
	}
	if f[0] != "-" {
		ns, ok := rfc3339(f[0])
		if !ok {
			return false
		}
		m.hasTime, m.time = true, ns
	}
	nilable := func(x string) string {
		if x == "-" {
			return ""
		}
		return x
	}
	m.hostname, m.appname, m.procid, m.msgid = nilable(f[1]), nilable(f[2]), nilable(f[3]), nilable(f[4])
	switch {
	case strings.HasPrefix(s, "-"):
		s = s[1:]
	case strings.HasPrefix(s, "["):
		n := 0
		for n < len(s) && s[n] == '[' {
			k := sdEnd(s[n:])
			if k < 0 {
				return false
			}
			n += k
		}
		m.sd, s = s[:n], s[n:]
	default:
		return false
	}
	switch {
	case s == "":
	case s[0] == ' ':
		m.message = strings.TrimPrefix(s[1:], "\uFEFF") // the BOM RFC 5424 allows
	default:
		return false
	}
	return true
}

// sdEnd checks the SD-ELEMENT at the start of s, "[id name="value" ...]",
// and returns its length, or -1.
func sdEnd(s string) int {
	i := 1
	name := func() bool {
		j := i
		for i < len(s) && s[i] > ' ' && s[i] < 0x7f && s[i] != '=' && s[i] != ']' && s[i] != '"' {
			i++
		}
		return i > j
	}
	if !name() {
		return -1
	}
	for {
		switch {
		case i < len(s) && s[i] == ']':
			return i + 1
		case i < len(s) && s[i] == ' ':
			i++
			if !name() || i+1 >= len(s) || s[i] != '=' || s[i+1] != '"' {
				return -1
			}
			i += 2
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				return -1
			}
			i++
		default:
			return -1
		}
	}
}

// sdElement splits the first of the checked SD-ELEMENTs sd into its id and
// its params (each ` name="value"`), and returns the rest.
func sdElement(sd string) (id, params, rest string) {
	n := sdEnd(sd)
	el := sd[1 : n-1]
	if j := strings.IndexByte(el, ' '); j >= 0 {
		return el[:j], el[j:], sd[n:]
	}
	return el, "", sd[n:]
}

// sdParam splits the first ` name="value"` of checked params, the value
// still escaped.
func sdParam(params string) (name, val, rest string) {
	eq := strings.IndexByte(params, '=')
	name = params[1:eq]
	i := eq + 2
	for ; params[i] != '"'; i++ {
		if params[i] == '\\' {
			i++
		}
	}
	return name, params[eq+2 : i], params[i+1:]
}

// rfc3164 reads TIMESTAMP [HOSTNAME] TAG[PID]: MSG after the PRI, with a
// timestamp "Mmm dd hh:mm:ss" (of the year of now, or the year before
// when that puts it over a month in the future) or in RFC 3339.
func (m *syslogMsg) rfc3164(s string, now int64) bool {
	if n := stampLen(s); n > 0 {
		var b [24]byte
		year := time.Unix(0, now).UTC().Year()
		buf := append(b[:0], s[:n]...)
		buf = append(buf, ' ')
		ns, ok := strftime.Parse(str(appendYear(buf, year)), "%b %e %H:%M:%S %Y")
		if !ok || ns > now+31*24*int64(time.Hour) {
			// Over a month ahead (December's lines read in January), or
			// February 29th of another year: the year before.
			if ns, ok = strftime.Parse(str(appendYear(buf, year-1)), "%b %e %H:%M:%S %Y"); !ok {
				return false
			}
		}
		m.hasTime, m.time = true, ns
		s = s[n:]
	} else {
		j := strings.IndexByte(s, ' ')
		if j <= 0 {
			return false
		}
		ns, ok := rfc3339(s[:j])
		if !ok {
			return false
		}
		m.hasTime, m.time = true, ns
		s = s[j:]
	}
	if s == "" {
		return true
	}
	if s[0] != ' ' {
		return false
	}
	s = s[1:]
	// A first word that is no tag ("app:", "app[12]:") is the hostname.
	if w, after, ok := strings.Cut(s, " "); ok && !isTag(w) && printable(w) {
		m.hostname, s = w, after
	}
	if w, after, _ := strings.Cut(s, " "); isTag(w) {
		w = strings.TrimSuffix(w, ":")
		if j := strings.IndexByte(w, '['); j > 0 {
			m.appname, m.procid = w[:j], w[j+1:len(w)-1]
		} else {
			m.appname = w
		}
		s = after
	}
	m.message = s
	return true
}

// isTag reports whether w is a TAG: "name:", "name[pid]:" or "name[pid]".
func isTag(w string) bool {
	colon := strings.HasSuffix(w, ":")
	w = strings.TrimSuffix(w, ":")
	name := w
	if j := strings.IndexByte(w, '['); j >= 0 {
		if !strings.HasSuffix(w, "]") {
			return false
		}
		pid := w[j+1 : len(w)-1]
		if pid == "" || !printable(pid) || strings.ContainsAny(pid, "[]") {
			return false
		}
		name = w[:j]
	} else if !colon {
		return false
	}
	return name != "" && printable(name) && !strings.ContainsAny(name, "[]:")
}

// stampLen is the length of the RFC 3164 timestamp "Mmm dd hh:mm:ss" at
// the start of s (the day space-padded, zero-padded or one digit), or 0.
func stampLen(s string) int {
	if len(s) < 14 || !isMonth(s[:3]) || s[3] != ' ' {
		return 0
	}
	i := 4
	if s[i] == ' ' {
		i++
	}
	j := i
	for i < len(s) && i-j < 2 && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == j || i+9 > len(s) || s[i] != ' ' {
		return 0
	}
	return i + 9
}

func isMonth(s string) bool {
	switch s {
	case "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec":
		return true
	}
	return false
}

func appendYear(b []byte, y int) []byte {
	if y < 1000 || y > 9999 {
		return append(b, "0000"...) // no such timestamp: Parse fails
	}
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10))
}

// rfc3339 reads an RFC 3339 timestamp, fractions of 1 to 9 digits allowed.
func rfc3339(s string) (int64, bool) {
	if len(s) < 20 || s[10] != 'T' {
		return 0, false
	}
	if strings.IndexByte(s, '.') >= 0 {
		return strftime.Parse(s, "%Y-%m-%dT%H:%M:%S.%N%z")
	}
	return strftime.Parse(s, "%Y-%m-%dT%H:%M:%S%z")
}

// printable reports whether s is of the printable ASCII characters
// (PRINTUSASCII of RFC 5424: no space).
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
