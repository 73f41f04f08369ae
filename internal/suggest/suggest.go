// Package suggest finds the known name that a misspelt one was most likely
// meant to be, for "did you mean" hints: the one algorithm behind the
// checker's (fields, locals, functions) and the pipeline config's (keys).
package suggest

import (
	"strings"
	"unicode"
)

// Closest returns the candidate nearest to name, or "" when none is near
// enough to be a slip. Names are compared without regard to case or to the
// separators '_', '-' and '.', so "Read-From-Head" meets "read_from_head".
// Near enough is an edit distance (Distance) of at most a third of name's
// length, at least 1 and at most 3; failing that, when name has 3 or more
// bytes, a candidate that begins with name ("namespace" for
// "namespace_name") or, of 3 or more bytes, that name begins with. Of
// equally near candidates the one nearer as written (separators counted)
// wins, then the first in sorted order: the answer does not depend on the
// order of candidates.
func Closest(name string, candidates []string) string {
	key, low := normalize(name), strings.ToLower(name)
	best, bestD, bestRaw := "", 0, 0
	consider := func(c string, d int) {
		raw := Distance(low, strings.ToLower(c))
		if best == "" || d < bestD || d == bestD && (raw < bestRaw || raw == bestRaw && c < best) {
			best, bestD, bestRaw = c, d, raw
		}
	}
	limit := max(1, min(3, len(name)/3))
	for _, c := range candidates {
		if d := Distance(key, normalize(c)); d <= limit {
			consider(c, d)
		}
	}
	if best != "" || len(name) < 3 {
		return best
	}
	for _, c := range candidates {
		ck := normalize(c)
		if strings.HasPrefix(ck, key) || strings.HasPrefix(key, ck) && len(ck) >= 3 {
			consider(c, Distance(key, ck))
		}
	}
	return best
}

// normalize lowers s and drops the separators people spell differently.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// Distance is the optimal-string-alignment distance between the bytes of a
// and b: insertions, deletions, substitutions and swaps of neighbours each
// cost one.
func Distance(a, b string) int {
	// Three rows of the table: i-2, i-1 and i.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
