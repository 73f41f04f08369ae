package calc

import "unicode/utf8"

// Truncate is the longest prefix of s of at most n bytes that does not end
// inside a UTF-8 character: a cut that would split a valid multi-byte
// character goes back to its start (bytes that are not UTF-8 are cut
// anywhere, as single bytes).
func Truncate(s string, n int64) string {
	switch {
	case n >= int64(len(s)):
		return s
	case n <= 0:
		return ""
	}
	cut := int(n)
	for j := cut - 1; j >= 0 && j > cut-utf8.UTFMax; j-- {
		if !utf8.RuneStart(s[j]) {
			continue
		}
		if r, size := utf8.DecodeRuneInString(s[j:]); (r != utf8.RuneError || size > 1) && j+size > cut {
			return s[:j]
		}
		break
	}
	return s[:cut]
}
