package compiler

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
)

// ReadFunc reads a module file by the path an import gives it: the
// importing file's directory joined with the import's path, slash
// separated. The command line reads the OS's files (policy.ReadFile, the
// default), the playground its editor's tabs.
type ReadFunc func(path string) ([]byte, error)

// A Loader loads the modules that policies import, each file once: a
// module imported by several policies (checked by one `policyrun check`,
// run by one pipeline) or several times through other modules is parsed
// and checked once, and its own diagnostics are reported once. A Loader
// is not safe for concurrent use.
type Loader struct {
	read ReadFunc
	mods map[string]*loaded
}

// loaded is one module file, by its path.
type loaded struct {
	mod *check.Module // nil when it could not be read, parsed or is no module
	// bad says why an import of it fails, for each importer (E0615);
	// empty when mod is fine.
	bad      string
	name     string    // the module's declared name
	own      diag.List // its own diagnostics, in its own file
	src      string
	loading  bool // its imports are being loaded: meeting it again is a cycle
	reported bool
}

// NewLoader returns a Loader that reads files with read (nil:
// policy.ReadFile).
func NewLoader(read ReadFunc) *Loader {
	if read == nil {
		read = policy.ReadFile
	}
	return &Loader{read: read, mods: map[string]*loaded{}}
}

// Files are the paths of the module files l has loaded or tried to
// load (one that could not be read too), sorted: the files a reload of
// the policies that imported them should look at again.
func (l *Loader) Files() []string {
	return slices.Sorted(maps.Keys(l.mods))
}

// ImportPath is the path of the file an import of imp, written in the
// file at from, names: relative to from's directory unless absolute.
func ImportPath(from, imp string) string {
	if path.IsAbs(imp) {
		return path.Clean(imp)
	}
	return path.Join(path.Dir(from), imp)
}

// resolve loads the modules of the imports of f, the file at from.
// Its diagnostics are the imports' errors, in from (a file that cannot
// be read, is no module, has errors, or closes a cycle), and the
// modules' own, the first time this Loader meets each, naming the chain
// of imports that led to it.
func (l *Loader) resolve(from string, f *policy.File, chain []string) (check.Imports, diag.List) {
	if len(f.Imports) == 0 {
		return nil, nil
	}
	imports := check.Imports{}
	var ds diag.List
	for _, d := range f.Imports {
		p := ImportPath(from, d.Path.Str)
		at := fmt.Sprintf("%s:%d:%d", from, d.Import.Line, d.Import.Col)
		e, more := l.load(p, append(chain[:len(chain):len(chain)], at))
		ds = append(ds, more...)
		switch {
		case e.loading:
			ds = append(ds, l.cycle(from, d, p, chain))
		case more.HasErrors():
			// The module's errors are reported just now: the import
			// needs none of its own (another importer gets one).
		case e.bad != "":
			ds = append(ds, withFile(from, diag.Errorf(d.Path, check.CodeImportFile, "cannot import %s: %s", d.Path.Raw, e.bad).
				WithHint("an import names a module file, relative to this one, that starts with module \"name\"")))
		default:
			imports[d] = e.mod
		}
	}
	return imports, ds
}

// load returns the module file at p, loading it the first time, and its
// diagnostics the first time they are reported.
func (l *Loader) load(p string, chain []string) (*loaded, diag.List) {
	e := l.mods[p]
	if e == nil {
		e = &loaded{loading: true}
		l.mods[p] = e
		l.parse(p, e, chain)
		e.loading = false
	}
	if e.reported || e.loading {
		return e, nil
	}
	e.reported = true
	out := make(diag.List, 0, len(e.own))
	for _, d := range e.own {
		if d.Filename == p {
			d.Source = e.src
			if len(chain) > 0 && e.name != "" {
				d.Msg += fmt.Sprintf(" (in module %s, imported at %s)", e.name, strings.Join(reversed(chain), " ← "))
			}
		}
		out = append(out, d)
	}
	return e, out
}

// parse reads, parses and checks the module file at p into e.
func (l *Loader) parse(p string, e *loaded, chain []string) {
	src, err := l.read(p)
	if err != nil {
		e.bad = err.Error()
		return
	}
	e.src = string(src)
	f, errs := policy.ParseFile(p, src)
	e.name = f.Name
	if !f.Module {
		e.bad = fmt.Sprintf("%s is a policy, not a module: a module starts with module \"name\"", p)
		return
	}
	if len(errs) > 0 {
		e.own = diag.FromSyntax(p, errs)
		e.bad = fmt.Sprintf("module %s has syntax errors", policy.Quote(f.Name))
		return
	}
	imports, ds := l.resolve(p, f, chain)
	m, more := check.CheckModule(f, p, imports)
	e.mod, e.own = m, append(ds, more...)
	m.Errors = e.own.HasErrors()
	if m.Errors {
		e.bad = fmt.Sprintf("module %s has errors (%s)", policy.Quote(f.Name), p)
	}
}

// cycle is the E0614 of the import d, in from, of p, which is being
// loaded: chain leads from the first file to from.
func (l *Loader) cycle(from string, d *policy.ImportDecl, p string, chain []string) diag.Diagnostic {
	var files []string
	for _, at := range chain {
		files = append(files, at[:strings.LastIndexByte(at[:strings.LastIndexByte(at, ':')], ':')])
	}
	files = append(files, from)
	for i, f := range files {
		if f == p {
			files = files[i:]
			break
		}
	}
	files = append(files, p)
	return withFile(from, diag.Errorf(d, check.CodeImportCycle, "import cycle: %s", strings.Join(files, " → ")).
		WithLabel("this import closes the cycle").
		WithHint("modules cannot import each other in a circle: move what both need into a third module"))
}

func withFile(name string, d diag.Diagnostic) diag.Diagnostic {
	d.Filename = name
	return d
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// errModule is what Compile returns for a module: it holds functions for
// policies to import, and runs no records itself.
var errModule = fmt.Errorf("a module runs no records: import it from a policy")

// check checks f, the file at filename with the text src, with its
// imports loaded: a policy with cfg, a module as its importers see it
// (its diagnostics once for this Loader).
//
// broken says f has syntax errors (Analyze checks what the parser made
// of it all the same): importers of the module then get an error.
func (l *Loader) check(filename string, src []byte, f *policy.File, cfg check.Config, broken bool) (*check.Info, diag.List) {
	if f.Module {
		p := path.Clean(filename)
		e := l.mods[p]
		if e == nil {
			e = &loaded{loading: true, src: string(src)}
			l.mods[p] = e
			imports, ds := l.resolve(filename, f, nil)
			e.mod, e.own = check.CheckModule(f, p, imports)
			e.own = append(ds, e.own...)
			e.mod.Errors = e.own.HasErrors() || broken
			e.loading = false
			switch {
			case broken:
				e.bad = fmt.Sprintf("module %s has syntax errors", policy.Quote(f.Name))
			case e.own.HasErrors():
				e.bad = fmt.Sprintf("module %s has errors (%s)", policy.Quote(f.Name), p)
			}
		}
		var ds diag.List
		if !e.reported {
			e.reported = true
			ds = e.own
		}
		if e.mod == nil {
			return nil, ds
		}
		return e.mod.Info, ds
	}
	imports, ds := l.resolve(filename, f, nil)
	cfg.Imports = imports
	info, more := cfg.Check(f)
	return info, append(ds, more...)
}
