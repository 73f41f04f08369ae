package lsp

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
)

// readFile reads a module a document imports: the text of the open
// document of that path, as the editor holds it, else the file.
func (s *server) readFile(name string) ([]byte, error) {
	for _, d := range s.docs {
		if d.filename() == name {
			return []byte(d.text), nil
		}
	}
	return policy.ReadFile(name)
}

// fileURI is the URI of the file at the path p (a module's).
func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// moduleOf returns the module of an's imports that declares the function
// fn or the constant k, nil when it is the file's own.
func moduleOf(an *analysis, fn *check.Func, k *check.Const) *check.Module {
	for _, m := range an.info.Modules {
		if fn != nil && m.Funcs[fn.Name] == fn || k != nil && m.Consts[k.Name] == k {
			return m
		}
	}
	return nil
}

// imported returns the module imported under name, nil when none is.
func imported(an *analysis, name string) *check.Module {
	if an.info == nil {
		return nil
	}
	for _, d := range an.file.Imports {
		if m := an.info.Imports[d]; m != nil && check.ImportName(d, m) == name {
			return m
		}
	}
	return nil
}

// memberItems are the functions and constants of m, for completion
// after "m.".
func memberItems(m *check.Module, edit Range) []completionItem {
	var items []completionItem
	for _, dc := range m.File.Decls {
		switch dc := dc.(type) {
		case *policy.FuncDecl:
			if fn := m.Funcs[dc.Name.Name]; fn != nil {
				items = append(items, completionItem{Label: fn.Name, Kind: kindFunction, Detail: fn.Sig(),
					SortText: fmt.Sprintf("%05d", len(items)), TextEdit: &textEdit{Range: edit, NewText: fn.Name}})
			}
		case *policy.ConstDecl:
			if k := m.Consts[dc.Name.Name]; k != nil {
				items = append(items, completionItem{Label: k.Name, Kind: kindVariable, Detail: k.Type.String(),
					SortText: fmt.Sprintf("%05d", len(items)), TextEdit: &textEdit{Range: edit, NewText: k.Name}})
			}
		}
	}
	return items
}

// declLocation is where the name of a function or a constant is
// declared: in d, or in the file of the module that declares it.
func declLocation(d *document, an *analysis, name *policy.Ident, fn *check.Func, k *check.Const) []Location {
	m := moduleOf(an, fn, k)
	if m == nil {
		return []Location{{URI: d.uri, Range: d.nodeRange(name)}}
	}
	// A Range counts UTF-16 columns, which only the module's text gives.
	read := d.read
	if read == nil {
		read = policy.ReadFile
	}
	src, err := read(m.Path)
	if err != nil {
		return nil
	}
	md := newDocument(fileURI(m.Path), 0, string(src))
	return []Location{{URI: md.uri, Range: md.nodeRange(name)}}
}

// declaredAt says where a function or constant of a module is declared.
func declaredAt(m *check.Module, line int) string {
	if m == nil {
		return fmt.Sprintf("declared at line %d", line)
	}
	return fmt.Sprintf("declared in module %s, %s:%d", m.Name, path.Base(m.Path), line)
}

// foreign moves the diagnostics of other files (an imported module's)
// onto the import that led to them, which is what the editor shows of
// this document: at the import whose module is that file, or else the
// first import (a module imported through another).
func foreign(filename string, f *policy.File, ds diag.List) diag.List {
	out := make(diag.List, 0, len(ds))
	for _, dg := range ds {
		if dg.Filename == filename || dg.Filename == "" || f == nil || len(f.Imports) == 0 {
			out = append(out, dg)
			continue
		}
		at := f.Imports[0]
		for _, im := range f.Imports {
			if compiler.ImportPath(filename, im.Path.Str) == dg.Filename {
				at = im
			}
		}
		dg.Msg = fmt.Sprintf("%s:%d:%d: %s", path.Base(dg.Filename), dg.Pos.Line, dg.Pos.Col, dg.Msg)
		dg.Pos, dg.End, dg.Filename, dg.Source = at.Path.Pos(), at.Path.End(), filename, ""
		out = append(out, dg)
	}
	return out
}

// importAt returns the import whose path or name holds the offset off,
// and its module (nil when it did not load).
func importAt(an *analysis, off int) (*policy.ImportDecl, *check.Module) {
	if an.file == nil {
		return nil, nil
	}
	for _, d := range an.file.Imports {
		if d.Pos().Offset <= off && off < d.End().Offset {
			if an.info == nil {
				return d, nil
			}
			return d, an.info.Imports[d]
		}
	}
	return nil, nil
}

// importDoc is what hover shows of an import: the module's name, its
// file, its functions' signatures and its constants' types.
func importDoc(d *policy.ImportDecl, m *check.Module) string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %s", m.Name)
	if name := check.ImportName(d, m); name != m.Name {
		fmt.Fprintf(&b, " (imported as %s)", name)
	}
	for _, dc := range m.File.Decls {
		switch dc := dc.(type) {
		case *policy.FuncDecl:
			if fn := m.Funcs[dc.Name.Name]; fn != nil {
				b.WriteString("\nfn " + fn.Sig())
			}
		case *policy.ConstDecl:
			if k := m.Consts[dc.Name.Name]; k != nil {
				fmt.Fprintf(&b, "\nconst %s.%s: %s", m.Name, k.Name, k.Type)
			}
		}
	}
	return code(b.String()) + "\n\n" + m.Path
}
