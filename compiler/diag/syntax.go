package diag

import "github.com/policyrun/policyrun/policy"

// FromSyntax converts the parser's syntax errors into diagnostics of file
// filename.
func FromSyntax(filename string, errs policy.ErrorList) List {
	out := make(List, 0, len(errs))
	for _, e := range errs {
		if e == nil {
			continue
		}
		end := e.End
		if !end.IsValid() {
			end = e.Pos
		}
		out = append(out, Diagnostic{
			Code: e.Code, Severity: Error, Pos: e.Pos, End: end,
			Msg: e.Msg, Hint: e.Hint, Filename: filename,
		})
	}
	return out
}
