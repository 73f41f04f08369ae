package compiler

import (
	"math"
	"regexp"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/internal/pmap"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// Registers are numbered in two spaces while the code is generated:
// constants (constBit set) and the rest. finish puts the constants first,
// as vm.Code wants, and renumbers every register operand.
const constBit = 0x8000

type reg = uint16

// gen generates the code of one policy.
type gen struct {
	file *policy.File
	info *check.Info
	opts spec.Options

	code  []vm.Instr
	lines []srcLine
	edits []vm.Instr // edits batched into EDITS by batchEdits

	consts   []vm.Reg
	constIdx map[constKey]reg
	nregs    int

	paths   []vm.Path
	pathIdx map[string]uint16
	regexps []*regexp.Regexp
	reIdx   map[*regexp.Regexp]uint16
	sets    []*vm.Set

	locals map[*check.Local]reg

	iterDepth, maxIters       int
	builderDepth, maxBuilders int

	// cache holds the registers of record paths read in the current
	// straight-line region, keyed by path; writes drop what they overlap.
	// It is persistent: saving it for a branch costs O(1).
	cache    pmap.Map[*pathNode, *cached]
	writeLog []*pathNode
	// pathNodes interns the constant record paths the cache is keyed by.
	pathNodes map[pathChild]*pathNode
	rootPath  *pathNode

	// access is what the code generated so far may read and write
	// (access.go); vm.New makes its lists minimal.
	access vm.Access

	// inlines are the calls of functions inlined so far (inline.go), the
	// first entry standing for the policy itself; frame is the one whose
	// body is being generated.
	inlines []vm.Inline
	frame   uint16
	// rets are the functions being inlined, innermost last: where their
	// returns put the value, and the jumps to patch to the end.
	rets []*retCtx
	// bound are the arguments the parameters of the functions being
	// inlined stand for: a pattern parameter's is compiled at its call.
	bound map[*check.Local]policy.Expr
}

// srcLine is where an instruction comes from: its source line, and the
// inlined call whose body holds it (0 for the policy's own code).
type srcLine struct {
	line  int32
	frame uint16
}

// A pathNode is a constant record path, interned: its parent is the path
// one step shorter, so the prefixes of a path are its node's ancestors.
type pathNode struct {
	parent *pathNode
	depth  int
	id     uint64
	// cachedBelow is set once a read of a path under this one was cached.
	cachedBelow bool
}

// Hash mixes the id.
func (n *pathNode) Hash() uint64 { return pmap.MixID(n.id) }

type pathChild struct {
	parent *pathNode
	step   record.Step
}

// child returns the path n followed by s.
func (g *gen) child(n *pathNode, s record.Step) *pathNode {
	k := pathChild{n, s}
	if m := g.pathNodes[k]; m != nil {
		return m
	}
	m := &pathNode{parent: n, depth: n.depth + 1, id: uint64(len(g.pathNodes) + 1)}
	g.pathNodes[k] = m
	return m
}

// nodeOf returns the node of the constant record path p.
func (g *gen) nodeOf(p record.Path) *pathNode {
	n := g.rootPath
	for _, s := range p {
		n = g.child(n, s)
	}
	return n
}

type constKey struct {
	k record.Kind
	n uint64
	s string
}

type cached struct {
	r    reg
	mask vm.Mask // the kinds the register can hold: every GUARD so far passed
}

func newGen(f *policy.File, info *check.Info, opts spec.Options) *gen {
	return &gen{
		file: f, info: info, opts: opts,
		constIdx:  map[constKey]reg{},
		pathIdx:   map[string]uint16{},
		reIdx:     map[*regexp.Regexp]uint16{},
		locals:    map[*check.Local]reg{},
		bound:     map[*check.Local]policy.Expr{},
		pathNodes: map[pathChild]*pathNode{},
		rootPath:  &pathNode{},
		inlines:   []vm.Inline{{}},
	}
}

// newReg returns a fresh register. Registers are never reused: a policy is
// small, and a value written once per run cannot be clobbered.
func (g *gen) newReg() reg {
	if g.nregs >= constBit-1 {
		failf("the policy needs more than %d registers", constBit-1)
	}
	g.nregs++
	return reg(g.nregs - 1)
}

// newRegs returns n consecutive fresh registers.
func (g *gen) newRegs(n int) reg {
	first := g.newReg()
	for i := 1; i < n; i++ {
		g.newReg()
	}
	return first
}

func (g *gen) constant(v vm.Reg) reg {
	k := constKey{v.K, v.N, v.S}
	if r, ok := g.constIdx[k]; ok {
		return r
	}
	if len(g.consts) >= constBit-1 {
		failf("the policy has too many constants")
	}
	r := reg(len(g.consts)) | constBit
	g.consts = append(g.consts, v)
	g.constIdx[k] = r
	return r
}

func (g *gen) constFloat(f float64) reg { return g.constant(vm.Float(f)) }
func (g *gen) constStr(s string) reg    { return g.constant(vm.String(s)) }

// constValue returns the constant held in r, if r is a constant register.
func (g *gen) constValue(r reg) (vm.Reg, bool) {
	if r&constBit == 0 {
		return vm.Reg{}, false
	}
	return g.consts[r&^constBit], true
}

func (g *gen) emit(pos policy.Pos, op vm.Op, a, b, c uint16, x uint8) int {
	g.code = append(g.code, vm.Instr{Op: op, A: a, B: b, C: c, X: x})
	g.lines = append(g.lines, srcLine{int32(pos.Line), g.frame})
	return len(g.code) - 1
}

// here is the index of the next instruction, a jump target.
func (g *gen) here() uint16 {
	if len(g.code) >= math.MaxUint16 {
		failf("the policy compiles to more than %d instructions", math.MaxUint16)
	}
	return uint16(len(g.code))
}

// patch sets the jump target of the jump at pc to the next instruction.
func (g *gen) patch(pc int) {
	switch g.code[pc].Op {
	case vm.NEXT:
		g.code[pc].C = g.here()
	default:
		g.code[pc].A = g.here()
	}
}

func (g *gen) path(p vm.Path) uint16 {
	key := ""
	if p.Dyn == nil {
		key = p.Steps.String()
		if i, ok := g.pathIdx[key]; ok {
			return i
		}
	}
	if len(g.paths) >= math.MaxUint16 {
		failf("the policy has too many paths")
	}
	g.paths = append(g.paths, p)
	i := uint16(len(g.paths) - 1)
	if p.Dyn == nil {
		g.pathIdx[key] = i
	}
	return i
}

func (g *gen) regex(re *regexp.Regexp) uint16 {
	if i, ok := g.reIdx[re]; ok {
		return i
	}
	g.regexps = append(g.regexps, re)
	i := uint16(len(g.regexps) - 1)
	g.reIdx[re] = i
	return i
}

// finish renumbers the registers (constants first) and builds the Program.
func (g *gen) finish() (*vm.Program, error) {
	g.forwardMoves()
	g.fuseGuards()
	g.sinkEdits()
	g.batchEdits()
	nc := len(g.consts)
	fix := func(r uint16) uint16 {
		if r&constBit != 0 {
			return r &^ constBit
		}
		return r + uint16(nc)
	}
	for i := range len(g.code) + len(g.edits) {
		var in *vm.Instr
		if i < len(g.code) {
			in = &g.code[i]
		} else {
			in = &g.edits[i-len(g.code)]
		}
		k := in.Op.Operands()
		if k[0] == 'w' || k[0] == 'r' {
			in.A = fix(in.A)
		}
		if k[1] == 'w' || k[1] == 'r' {
			in.B = fix(in.B)
		}
		if k[2] == 'w' || k[2] == 'r' {
			in.C = fix(in.C)
		}
	}
	for i := range g.paths {
		p := &g.paths[i]
		for j := range p.Dyn {
			p.Dyn[j] = fix(p.Dyn[j])
		}
	}
	if nc+g.nregs > 1<<16 {
		failf("the policy needs more than 65,536 registers")
	}
	lines := make([]int32, len(g.lines))
	var frames []uint16
	if len(g.inlines) > 1 {
		frames = make([]uint16, len(g.lines))
	}
	for i, l := range g.lines {
		lines[i] = l.line
		if frames != nil {
			frames[i] = l.frame
		}
	}
	if frames == nil {
		g.inlines = nil
	}
	return vm.New(vm.Code{
		Name:        g.file.Name,
		OnFaultDrop: g.file.OnFault == policy.OnFaultDrop,
		OTLP:        g.file.IsOTLP(),
		Access:      &g.access,
		Instrs:      g.code,
		Lines:       lines,
		Frames:      frames,
		Inlines:     g.inlines,
		Edits:       g.edits,
		Consts:      g.consts,
		NumRegs:     nc + g.nregs,
		Paths:       g.paths,
		Regexps:     g.regexps,
		Sets:        g.sets,
		Iters:       g.maxIters,
		Builders:    g.maxBuilders,
		Options:     g.opts,
		States:      g.info.StateSpecs(),
	})
}

// ---------------------------------------------------------------- cache

func (g *gen) cacheGet(n *pathNode) *cached {
	c, _ := g.cache.Get(n)
	return c
}

func (g *gen) cachePut(n *pathNode, r reg, m vm.Mask) {
	g.cache = g.cache.Set(n, &cached{r: r, mask: m})
	for a := n.parent; a != nil && !a.cachedBelow; a = a.parent {
		a.cachedBelow = true
	}
}

// invalidate forgets every cached read that a write of p may change.
func (g *gen) invalidate(p record.Path) {
	n := g.nodeOf(p)
	g.forget(n)
	g.writeLog = append(g.writeLog, n)
}

// forget drops the cached reads of the path n, of the paths above it and
// of those under it.
func (g *gen) forget(n *pathNode) {
	for a := n; a != nil; a = a.parent {
		g.cache = g.cache.Delete(a)
	}
	if !n.cachedBelow {
		return
	}
	var under []*pathNode
	g.cache.All(func(m *pathNode, _ *cached) bool {
		for a := m; a != nil && a.depth >= n.depth; a = a.parent {
			if a == n {
				under = append(under, m)
				break
			}
		}
		return true
	})
	for _, m := range under {
		g.cache = g.cache.Delete(m)
	}
}

func (g *gen) saveCache() pmap.Map[*pathNode, *cached] { return g.cache }

// restoreCache goes back to a saved cache, without what the writes logged
// since mark may have changed.
func (g *gen) restoreCache(saved pmap.Map[*pathNode, *cached], mark int) {
	g.cache = saved
	for _, n := range g.writeLog[mark:] {
		g.forget(n)
	}
}

// batchEdits replaces each run of consecutive edit instructions (set,
// remove, rename, lift) that no jump enters in the middle by one EDITS:
// a chain of edits runs in one dispatch, as it encodes in one pass.
func (g *gen) batchEdits() {
	targets := g.jumpTargets()
	newIdx := make([]uint16, len(g.code)+1)
	var code []vm.Instr
	var lines []srcLine
	for i := 0; i < len(g.code); {
		j := i + 1
		if g.code[i].Op.IsEdit() {
			for j < len(g.code) && g.code[j].Op.IsEdit() && !targets[j] {
				j++
			}
		}
		for k := i; k < j; k++ {
			newIdx[k] = uint16(len(code))
		}
		if j-i >= 2 {
			code = append(code, vm.Instr{Op: vm.EDITS, A: uint16(len(g.edits)), B: uint16(j - i)})
			g.edits = append(g.edits, g.code[i:j]...)
		} else {
			code = append(code, g.code[i])
		}
		lines = append(lines, g.lines[i])
		i = j
	}
	newIdx[len(g.code)] = uint16(len(code))
	retarget(code, newIdx)
	g.code, g.lines = code, lines
}
