package deploy

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// An instruction is one instruction of the Containerfile.
type instruction struct {
	cmd   string // FROM, RUN, COPY…, in upper case
	args  string // the rest, its continuation lines joined
	line  int
	stage int // the index of the FROM it follows; -1 before the first
}

func readContainerfile() ([]instruction, error) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "Containerfile"))
	if err != nil {
		return nil, err
	}
	var out []instruction
	stage, cont := -1, false
	for i, line := range strings.Split(string(src), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		more := strings.HasSuffix(trimmed, `\`)
		trimmed = strings.TrimSpace(strings.TrimSuffix(trimmed, `\`))
		if cont {
			out[len(out)-1].args += " " + trimmed
		} else {
			cmd, args, _ := strings.Cut(trimmed, " ")
			cmd = strings.ToUpper(cmd)
			if cmd == "FROM" {
				stage++
			}
			out = append(out, instruction{cmd: cmd, args: strings.TrimSpace(args), line: i + 1, stage: stage})
		}
		cont = more
	}
	return out, nil
}

// containerfile is the Containerfile read into what the tests check.
type containerfile struct {
	ins        []instruction
	globalArgs map[string]string // ARGs before the first FROM, with their defaults
	stageNames map[string]int    // FROM … AS name
	final      int               // the last stage: the image
}

func parseContainerfile() (*containerfile, error) {
	ins, err := readContainerfile()
	if err != nil {
		return nil, err
	}
	c := &containerfile{ins: ins, globalArgs: map[string]string{}, stageNames: map[string]int{}}
	for _, in := range c.ins {
		switch {
		case in.cmd == "ARG" && in.stage < 0:
			for _, a := range strings.Fields(in.args) {
				name, def, _ := strings.Cut(a, "=")
				c.globalArgs[name] = def
			}
		case in.cmd == "FROM":
			f := strings.Fields(in.args)
			if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				c.stageNames[f[len(f)-1]] = in.stage
			}
			c.final = in.stage
		}
	}
	return c, nil
}

func mustParseContainerfile(t *testing.T) *containerfile {
	t.Helper()
	c, err := parseContainerfile()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// of returns the instructions cmd of stage.
func (c *containerfile) of(stage int, cmd string) []instruction {
	var out []instruction
	for _, in := range c.ins {
		if in.stage == stage && in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// exec is a JSON-form instruction's arguments (ENTRYPOINT, CMD).
func (c *containerfile) exec(cmd string) ([]string, error) {
	ins := c.of(c.final, cmd)
	if len(ins) != 1 {
		return nil, fmt.Errorf("the image's stage has %d %s instructions, want 1", len(ins), cmd)
	}
	var args []string
	if err := json.Unmarshal([]byte(ins[0].args), &args); err != nil || len(args) == 0 {
		return nil, fmt.Errorf("Containerfile:%d: %s is not in its JSON form: %v", ins[0].line, cmd, err)
	}
	return args, nil
}

func (c *containerfile) mustExec(t *testing.T, cmd string) []string {
	t.Helper()
	args, err := c.exec(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return args
}

// A copy is a COPY instruction: its sources, its destination and the
// stage it copies from (-1: the build context).
type copyIns struct {
	from int
	srcs []string
	dst  string
	line int
}

func (c *containerfile) copies(stage int) ([]copyIns, error) {
	var out []copyIns
	for _, in := range c.of(stage, "COPY") {
		cp := copyIns{from: -1, line: in.line}
		f := strings.Fields(in.args)
		for len(f) > 0 && strings.HasPrefix(f[0], "--") {
			if name, ok := strings.CutPrefix(f[0], "--from="); ok {
				i, known := c.stageNames[name]
				if !known {
					return nil, fmt.Errorf("Containerfile:%d: COPY --from=%s names no stage", in.line, name)
				}
				cp.from = i
			}
			f = f[1:]
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("Containerfile:%d: COPY needs a source and a destination", in.line)
		}
		cp.srcs, cp.dst = f[:len(f)-1], f[len(f)-1]
		out = append(out, cp)
	}
	return out, nil
}

func (c *containerfile) mustCopies(t *testing.T, stage int) []copyIns {
	t.Helper()
	cps, err := c.copies(stage)
	if err != nil {
		t.Fatal(err)
	}
	return cps
}

// dest is where a COPY puts src.
func (cp copyIns) dest(src string) string {
	if strings.HasSuffix(cp.dst, "/") || len(cp.srcs) > 1 {
		return filepath.Join(cp.dst, filepath.Base(src))
	}
	return cp.dst
}

// build is the stage that builds the binary, its command (the RUN that
// writes the file the image's stage copies to its ENTRYPOINT), that
// file, and the stage's build arguments with their defaults.
func (c *containerfile) build() (stage int, run, out string, args map[string]string, err error) {
	entry, err := c.exec("ENTRYPOINT")
	if err != nil {
		return 0, "", "", nil, err
	}
	cps, err := c.copies(c.final)
	if err != nil {
		return 0, "", "", nil, err
	}
	for _, cp := range cps {
		for _, src := range cp.srcs {
			if cp.from >= 0 && cp.dest(src) == entry[0] {
				stage, out = cp.from, src
			}
		}
	}
	if out == "" {
		return 0, "", "", nil, fmt.Errorf("the image's stage copies nothing from a build stage to its ENTRYPOINT %s", entry[0])
	}
	for _, in := range c.of(stage, "RUN") {
		if strings.Contains(in.args, "go build") && strings.Contains(in.args, out) {
			run = in.args
		}
	}
	if run == "" {
		return 0, "", "", nil, fmt.Errorf("no RUN of stage %d builds %s with go build", stage, out)
	}
	args = map[string]string{}
	for _, in := range c.of(stage, "ARG") {
		for _, a := range strings.Fields(in.args) {
			name, def, _ := strings.Cut(a, "=")
			args[name] = def
		}
	}
	return stage, run, out, args, nil
}

// buildImageBinary builds policyrun at bin with the Containerfile's build
// command, as the image's build runs it: in the build context (the
// repository: the stage copies it to its WORKDIR), for linux on this
// machine's architecture, with the build arguments build.sh passes set
// to the test's values, and no GOFLAGS (the Go image sets none).
func buildImageBinary(bin string) error {
	c, err := parseContainerfile()
	if err != nil {
		return err
	}
	_, run, out, args, err := c.build()
	if err != nil {
		return err
	}
	given := map[string]string{
		"TARGETOS": "linux", "TARGETARCH": runtime.GOARCH,
		"VERSION": testVersion, "REVISION": testRevision, "REVISION_TIME": testTime, "REVISION_MODIFIED": "false",
	}
	env := append(os.Environ(), "GOFLAGS=")
	for name, def := range args {
		v, ok := given[name]
		if !ok {
			v = def
		}
		env = append(env, name+"="+v)
	}
	cmd := exec.Command("sh", "-c", strings.ReplaceAll(run, out, bin))
	cmd.Dir, cmd.Env = repoRoot, env
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("the Containerfile's build, %s: %v\n%s", run, err, b)
	}
	return nil
}

// TestContainerfile: the image is built on the Go of go.mod, from files
// that are in the build context, into an image whose entry point is the
// binary, run as a user that is not root, with the CA certificates Go
// reads; the build arguments build.sh passes are the Containerfile's.
func TestContainerfile(t *testing.T) {
	c := mustParseContainerfile(t)

	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	goVersion := string(m[1])
	builder := c.ins[slices.IndexFunc(c.ins, func(in instruction) bool { return in.cmd == "FROM" })]
	var image string
	for _, f := range strings.Fields(builder.args) {
		if !strings.HasPrefix(f, "--") {
			image = f
			break
		}
	}
	for name, def := range c.globalArgs {
		image = strings.ReplaceAll(image, "${"+name+"}", def)
	}
	if _, tag, _ := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":"); tag != goVersion && !strings.HasPrefix(tag, goVersion+"-") {
		t.Errorf("Containerfile:%d: the builder is %s, not the Go of go.mod (%s)", builder.line, image, goVersion)
	}

	if got := c.mustExec(t, "ENTRYPOINT"); !slices.Equal(got, []string{"/policyrun"}) {
		t.Errorf("ENTRYPOINT %q, want [\"/policyrun\"]", got)
	}
	users := c.of(c.final, "USER")
	if len(users) == 0 {
		t.Fatal("the image runs as root: its stage has no USER")
	}
	user := users[len(users)-1]
	for _, id := range strings.Split(user.args, ":") {
		if n, err := strconv.Atoi(id); err != nil || n == 0 {
			t.Errorf("Containerfile:%d: USER %s: want numeric ids other than 0 (runAsNonRoot can check only a number)", user.line, user.args)
		}
	}

	// Go's crypto/x509 reads this file first on Linux; the base is empty.
	const caFile = "/etc/ssl/certs/ca-certificates.crt"
	hasCA := false
	ignore := readIgnore(t)
	for _, cp := range c.mustCopies(t, c.final) {
		for _, src := range cp.srcs {
			hasCA = hasCA || cp.dest(src) == caFile
			if cp.from >= 0 {
				continue
			}
			if _, err := os.Stat(filepath.Join(repoRoot, src)); err != nil {
				t.Errorf("Containerfile:%d: COPY %s: %v", cp.line, src, err)
			}
			if p := ignore.excludes(src); p != "" {
				t.Errorf("Containerfile:%d: COPY %s, which .dockerignore leaves out of the context (%s)", cp.line, src, p)
			}
		}
	}
	if !hasCA {
		t.Errorf("the image has no %s: its TLS outputs could verify no server", caFile)
	}

	script, err := os.ReadFile(filepath.Join(repoRoot, "deploy/image/build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, declared, err := c.build()
	if err != nil {
		t.Fatal(err)
	}
	// PREBUILT=1 stands in for the stage that builds the binary, by name.
	buildStage, _, _, _, err := c.build()
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^build_stage=(\S+)$`).FindSubmatch(script); m == nil {
		t.Error("build.sh names no build_stage")
	} else if i, ok := c.stageNames[string(m[1])]; !ok || i != buildStage {
		t.Errorf("build.sh's PREBUILT=1 stands in for the stage %q, which is not the one that builds the binary", m[1])
	}
	passed := regexp.MustCompile(`(?m)^\s*--build-arg (\w+)=`).FindAllSubmatch(script, -1)
	if len(passed) == 0 {
		t.Error("build.sh passes no build argument")
	}
	for _, p := range passed {
		if _, ok := declared[string(p[1])]; !ok {
			t.Errorf("build.sh passes %s, which the build stage does not declare (ARG)", p[1])
		}
	}
}

// TestImageBinary: the Containerfile's build command makes a static
// binary (no interpreter, no dynamic section: it runs on an empty base)
// without the build machine's paths (-trimpath), which says the version
// and revision it was given, though its build has no VCS information.
func TestImageBinary(t *testing.T) {
	bin := binary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %v program header: it is not static", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs %q", libs)
	}
	abs, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(bin); err != nil {
		t.Fatal(err)
	} else if bytes.Contains(b, []byte(abs+"/")) {
		t.Errorf("the binary holds the build machine's path %s: built without -trimpath?", abs)
	}

	code, out := runPolicyrun(t, bin, "version")
	for _, want := range []string{"policyrun " + testVersion + "\n", "revision " + testRevision + "\n", "time " + testTime + "\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("policyrun version: exit %d, want %q in\n%s", code, want, out)
		}
	}
}

// TestImageDefaultPipeline: the image's CMD, with --check, passes on the
// config and policy the image holds, where it holds them.
func TestImageDefaultPipeline(t *testing.T) {
	bin := binary(t)
	c := mustParseContainerfile(t)
	args := c.mustExec(t, "CMD")
	conf := configArg(t, args)
	r := newRoot(t, filepath.Dir(conf))
	found := false
	for _, cp := range c.mustCopies(t, c.final) {
		for _, src := range cp.srcs {
			dst := cp.dest(src)
			if cp.from >= 0 || r.prefixOf(dst) == "" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(repoRoot, src))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(r.path(dst), b, 0o644); err != nil {
				t.Fatal(err)
			}
			found = found || dst == conf
		}
	}
	if !found {
		t.Fatalf("the CMD runs %s, which the image's stage does not copy", conf)
	}
	mustCheck(t, bin, strings.Fields(r.remap(strings.Join(args, " "))))
}

// dockerignore is .dockerignore's patterns.
type dockerignore []string

func readIgnore(t *testing.T) dockerignore {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var d dockerignore
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			d = append(d, strings.TrimPrefix(l, "/"))
		}
	}
	return d
}

// excludes returns the pattern that leaves path (relative to the
// context) out, or "": a pattern matches the path or a directory above
// it; a leading **/ matches at any depth. (Exceptions, !pattern, are not
// used.)
func (d dockerignore) excludes(path string) string {
	parts := strings.Split(filepath.Clean(path), "/")
	for _, p := range d {
		pat, anyDepth := strings.CutPrefix(p, "**/")
		for i := range parts {
			for j := i + 1; j <= len(parts); j++ {
				if i > 0 && !anyDepth {
					break
				}
				if ok, _ := filepath.Match(pat, strings.Join(parts[i:j], "/")); ok {
					return p
				}
			}
		}
	}
	return ""
}
