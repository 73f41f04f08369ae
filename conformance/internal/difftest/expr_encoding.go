package difftest

// exprB returns an expression of type t that calls a built-in of the encoding,
// hashing, network or log-format groups (docs/language.md), or "" when it has
// none of that type. expr asks it first, one time in eight, so that the
// other built-ins keep their share.
func (g *Gen) exprB(t string, d int) string {
	switch t {
	case "string":
		switch g.r.IntN(7) {
		case 4:
			// The whole result, as JSON.
			return "to_string(parse_url(" + g.url(d) + "))"
		case 5:
			return "to_string(" + g.pick("parse_syslog", "parse_common_log") + "(" + g.logLine(d) + "))"
		case 6:
			return "join(parse_csv(" + g.csvLine(d) + g.pick("", `, ";"`, `, "\t"`, `, "ab"`) + ") ?? [\"-\"], \"|\")"
		case 0:
			return g.pick("encode_base64", "encode_hex", "encode_url") + "(" + g.expr("string", d) + ")"
		case 1:
			return "(" + g.pick("decode_base64", "decode_hex", "decode_url") + "(" + g.encoded(d) + ") ?? " + g.strLit() + ")"
		case 2:
			return g.pick("md5_hex", "sha1_hex", "sha512_hex") + "(" + g.expr("string", d) + ")"
		default:
			return "hmac_sha256_hex(" + g.expr("string", d) + ", " + g.expr("string", d) + ")"
		}
	case "int":
		if g.r.IntN(2) == 0 {
			return "((parse_url(" + g.url(d) + ") ?? {\"port\": 1}).port ?? 0)"
		}
		return "(xxhash64(" + g.expr("string", d) + ") % 1000)"
	case "bool":
		switch g.r.IntN(3) {
		case 0:
			// A round trip holds for every string.
			return "(" + g.pick("decode_base64(encode_base64", "decode_hex(encode_hex", "decode_url(encode_url") + "(" + g.expr("string", d) + ")) != null)"
		case 1:
			return g.pick("is_ipv4", "is_ipv6") + "(" + g.ip(d) + ")"
		default:
			return "ip_in_cidr(" + g.ip(d) + ", " + g.pick(`"10.0.0.0/8"`, `"::/0"`, `"2001:db8::/32"`, `"0.0.0.0/0"`, `"::ffff:0:0/96"`) + ")"
		}
	case "array<string>":
		return "(parse_csv(" + g.csvLine(d) + ") ?? [])"
	case "map<string>":
		switch g.r.IntN(3) {
		case 0:
			return "(parse_query(" + g.url(d) + ") ?? {})"
		case 1:
			return "(parse_grok(" + g.logLine(d) + ", " + g.pick("\"%{COMBINEDAPACHELOG}\"", "\"%{COMMONAPACHELOG}\"",
				"`^<%{NONNEGINT:pri}>%{GREEDYDATA:rest}`", "`%{IP:ip}|%{WORD:ip}`", "`%{SYSLOGTIMESTAMP:ts} %{HOSTNAME:h}`",
				"`(?P<a>x)?%{NUMBER:n}`", "`%{QS:q}`") + ") ?? {})"
		}
		return "((parse_url(" + g.url(d) + ")).query ?? {})"
	}
	return ""
}

// encoded returns a string expression that is often valid base64, hex or
// percent-encoding, and sometimes almost.
func (g *Gen) encoded(d int) string {
	if g.r.IntN(2) == 0 {
		return g.expr("string", d)
	}
	return g.pick(`"aGk="`, `"aGk"`, `"6869"`, `"4A4b"`, `"a%20b"`, `"%zz"`, `"+%2B"`, `""`, `"x%4"`, `"YQ=="`)
}

// ip returns a string expression that is often an IP address.
func (g *Gen) ip(d int) string {
	if g.r.IntN(3) == 0 {
		return g.expr("string", d)
	}
	return g.pick(`"10.1.2.3"`, `"::1"`, `"2001:db8::7"`, `"::ffff:10.0.0.1"`, `"256.0.0.1"`, `"fe80::1%eth0"`, `"01.2.3.4"`, `"1.2.3.4"`)
}

// url returns a string expression that is often a URL or a query string.
func (g *Gen) url(d int) string {
	if g.r.IntN(3) == 0 {
		return g.expr("string", d)
	}
	return g.pick(`"https://u:p@h.example:8443/a%20b?x=1&y=a+b#f"`, `"http://[::1]/"`, `"mailto:a@b"`, `"?a=1&a=2&b"`,
		`"http://h:99999/"`, `"x=%zz"`, `"HTTP://H/p?q"`, `"a=1&b=%C3%A9"`)
}

// logLine returns a string expression that is often a syslog or a Common
// Log Format line.
func (g *Gen) logLine(d int) string {
	if g.r.IntN(4) == 0 {
		return g.expr("string", d)
	}
	return g.pick(
		`"<165>1 2003-10-11T22:14:15.003+02:00 host app 1370 ID47 [ex@1 a=\"1\" b=\"x\\\"y\"][m s=\"2\"] hello"`,
		`"<34>1 - - - - - -"`, `"<13>1 2020-03-13T20:45:38Z h a - - - "`, `"<38>Dec 31 23:59:59 web-1 sshd[4711]: Accepted"`,
		`"<13>Jan  1 00:00:00 cron[a1]: job"`, `"Feb 29 10:00:00 host msg"`, `"<192>1 - - - - - -"`, `"<13>1 - h a p m [x a=\"b\" r"`,
		`"127.0.0.1 bob frank [10/Oct/2000:13:55:36 -0700] \"GET /a.gif HTTP/1.0\" 200 2326"`,
		`"::1 - - [01/Jan/2026:00:00:00 +0000] \"-\" 408 -"`, `"h - - - \"x\" 400 0"`, `"h - - [31/Feb/2026:00:00:00 +0000] \"GET / HTTP/1.1\" 200 5"`)
}

// csvLine returns a string expression that is often a CSV record.
func (g *Gen) csvLine(d int) string {
	if g.r.IntN(3) == 0 {
		return g.expr("string", d)
	}
	return g.pick(`"a,b,,c"`, `"\"x,y\",\"say \"\"hi\"\"\""`, `""`, `"a;b\tc"`, `"\"open,"`, `"\"a\"b"`, `"two\nlines"`, `"x,y\r\n"`)
}
