package lsp

import "github.com/policyrun/policyrun/policy"

// format is the canonical layout of d (policy.FormatSource, as policyrun
// fmt writes it) as one edit of the whole document; no edit when d is in
// that layout already, or when it has syntax errors (its diagnostics say
// where).
func (d *document) format() []textEdit {
	out, err := policy.FormatSource(d.filename(), []byte(d.text))
	if err != nil || string(out) == d.text {
		return []textEdit{}
	}
	return []textEdit{{Range: d.rangeOf(0, len(d.text)), NewText: string(out)}}
}
