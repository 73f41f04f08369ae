package difftest

// exprB returns an expression of type t that calls a built-in of §12,
// part B (encoding, hashing, network, log formats), or "" when it has
// none of that type. expr asks it first, one time in five, so that the
// other built-ins keep their share.
func (g *Gen) exprB(t string, d int) string {
	switch t {
	case "string":
		switch g.r.IntN(4) {
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
		return "(xxhash64(" + g.expr("string", d) + ") % 1000)"
	case "bool":
		// A round trip holds for every string.
		return "(" + g.pick("decode_base64(encode_base64", "decode_hex(encode_hex", "decode_url(encode_url") + "(" + g.expr("string", d) + ")) != null)"
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
