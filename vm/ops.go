package vm

import (
	"errors"
	"fmt"

	"github.com/policyrun/policyrun/internal/builtin"
)

// Op is an opcode. The operand columns say what A, B, C and X hold:
// "w" a register written, "r" a register read, "p" a path, "j" a jump
// target (an instruction index), "s" an in-set, "e" a regex, "m" a kind
// mask, "i" an iterator slot, "b" a builder slot, "n" a number, "f" a
// built-in function, "t" a state table (Code.States); "-" unused.
type Op uint8

const (
	NOP Op = iota
	MOVE
	ROOT
	TAG
	TIME
	GET
	GETIN
	INDEX
	GUARD
	WIDEN
	SNAP
	NOT
	NEG_INT
	NEG_FLT
	I2F
	ADD_INT
	SUB_INT
	MUL_INT
	DIV_INT
	MOD_INT
	ADD_FLT
	SUB_FLT
	MUL_FLT
	DIV_FLT
	MOD_FLT
	CONCAT
	EQ_INT
	LT_INT
	LE_INT
	EQ_FLT
	LT_FLT
	LE_FLT
	EQ_STR
	LT_STR
	LE_STR
	EQ_BOOL
	EQ
	ISNULL
	EXISTS
	IN
	JMP
	JT
	JF
	JNN
	CALL
	MAPNEW
	MAPPUT
	MAPEND
	ARRNEW
	ARRPUT
	ARREND
	SET
	SETQ
	REMOVE
	RENAME
	LIFT
	EDITS
	SETTAG
	SETTIME
	SETROOT
	ITER
	NEXT
	DROP
	KEEP
	GETG
	ACAT
	GUARDP
	SPLIT
	KEY
	KEYMIX
	DEDUPE
	RATE
	SAMPLE
	EVERY
	numOps
)

type opInfo struct {
	name       string
	a, b, c, x byte
	doc        string
}

var ops = [numOps]opInfo{
	NOP:     {"NOP", '-', '-', '-', '-', "do nothing"},
	MOVE:    {"MOVE", 'w', 'r', '-', '-', "A = B"},
	ROOT:    {"ROOT", 'w', '-', '-', '-', "A = the record's root map"},
	TAG:     {"TAG", 'w', '-', '-', '-', "A = %tag"},
	TIME:    {"TIME", 'w', '-', '-', '-', "A = %time"},
	GET:     {"GET", 'w', 'p', '-', '-', "A = the record's value at path B (absent when missing)"},
	GETIN:   {"GETIN", 'w', 'r', 'p', '-', "A = the value at path C below B"},
	INDEX:   {"INDEX", 'w', 'r', 'r', '-', "A = B[C]: a map key (string C) or array element (int C)"},
	GUARD:   {"GUARD", 'r', 'm', '-', '-', "type_mismatch fault unless A's kind is in mask B"},
	WIDEN:   {"WIDEN", 'w', '-', '-', '-', "A = float(A) when A holds an int (a float field holding an int)"},
	SNAP:    {"SNAP", 'w', '-', '-', '-', "A = a copy of A that later edits do not change"},
	NOT:     {"NOT", 'w', 'r', '-', '-', "A = !B"},
	NEG_INT: {"NEG_INT", 'w', 'r', '-', '-', "A = -B"},
	NEG_FLT: {"NEG_FLT", 'w', 'r', '-', '-', "A = -B"},
	I2F:     {"I2F", 'w', 'r', '-', '-', "A = float(B)"},
	ADD_INT: {"ADD_INT", 'w', 'r', 'r', '-', "A = B + C (wraps)"},
	SUB_INT: {"SUB_INT", 'w', 'r', 'r', '-', "A = B - C (wraps)"},
	MUL_INT: {"MUL_INT", 'w', 'r', 'r', '-', "A = B * C (wraps)"},
	DIV_INT: {"DIV_INT", 'w', 'r', 'r', '-', "A = B / C, truncated; division_by_zero fault when C is 0"},
	MOD_INT: {"MOD_INT", 'w', 'r', 'r', '-', "A = B % C; division_by_zero fault when C is 0"},
	ADD_FLT: {"ADD_FLT", 'w', 'r', 'r', '-', "A = B + C; non_finite fault on NaN or infinity"},
	SUB_FLT: {"SUB_FLT", 'w', 'r', 'r', '-', "A = B - C; non_finite fault"},
	MUL_FLT: {"MUL_FLT", 'w', 'r', 'r', '-', "A = B * C; non_finite fault"},
	DIV_FLT: {"DIV_FLT", 'w', 'r', 'r', '-', "A = B / C; division_by_zero fault when C is 0"},
	MOD_FLT: {"MOD_FLT", 'w', 'r', 'r', '-', "A = fmod(B, C); division_by_zero fault when C is 0"},
	CONCAT:  {"CONCAT", 'w', 'r', 'r', '-', "A = B + C (strings); string_too_long fault"},
	EQ_INT:  {"EQ_INT", 'w', 'r', 'r', '-', "A = B == C (ints, timestamps)"},
	LT_INT:  {"LT_INT", 'w', 'r', 'r', '-', "A = B < C (ints, timestamps)"},
	LE_INT:  {"LE_INT", 'w', 'r', 'r', '-', "A = B <= C (ints, timestamps)"},
	EQ_FLT:  {"EQ_FLT", 'w', 'r', 'r', '-', "A = B == C (floats)"},
	LT_FLT:  {"LT_FLT", 'w', 'r', 'r', '-', "A = B < C (floats)"},
	LE_FLT:  {"LE_FLT", 'w', 'r', 'r', '-', "A = B <= C (floats)"},
	EQ_STR:  {"EQ_STR", 'w', 'r', 'r', '-', "A = B == C (strings)"},
	LT_STR:  {"LT_STR", 'w', 'r', 'r', '-', "A = B < C (strings, bytewise)"},
	LE_STR:  {"LE_STR", 'w', 'r', 'r', '-', "A = B <= C (strings, bytewise)"},
	EQ_BOOL: {"EQ_BOOL", 'w', 'r', 'r', '-', "A = B == C (bools)"},
	EQ:      {"EQ", 'w', 'r', 'r', '-', "A = B == C for values of any kind (absent equals null; ints equal floats by value)"},
	ISNULL:  {"ISNULL", 'w', 'r', '-', '-', "A = B is absent or null"},
	EXISTS:  {"EXISTS", 'w', 'r', '-', '-', "A = B is not absent"},
	IN:      {"IN", 'w', 'r', 's', '-', "A = B is in set C"},
	JMP:     {"JMP", 'j', '-', '-', '-', "jump to A"},
	JT:      {"JT", 'j', 'r', '-', '-', "jump to A when B is true"},
	JF:      {"JF", 'j', 'r', '-', '-', "jump to A when B is false"},
	JNN:     {"JNN", 'j', 'r', '-', '-', "jump to A when B is neither absent nor null"},
	CALL:    {"CALL", 'w', 'r', 'e', 'f', "A = built-in X over registers B, B+1, ... (C: the regex, if any, or the number of arguments of a variadic one)"},
	MAPNEW:  {"MAPNEW", 'b', 'n', '-', '-', "start a map in builder A with room for B entries"},
	MAPPUT:  {"MAPPUT", 'b', 'r', 'r', '-', "add key B (a string) and value C to builder A"},
	MAPEND:  {"MAPEND", 'w', 'b', '-', '-', "A = the map of builder B"},
	ARRNEW:  {"ARRNEW", 'b', 'n', '-', '-', "start an array in builder A with room for B elements"},
	ARRPUT:  {"ARRPUT", 'b', 'r', '-', '-', "append B to builder A"},
	ARREND:  {"ARREND", 'w', 'b', '-', '-', "A = the array of builder B"},
	SET:     {"SET", 'p', 'r', '-', '-', "set path A to B (absent B removes A); path_conflict fault"},
	SETQ:    {"SETQ", 'p', 'r', '-', '-', "set path A to B when A is absent or null"},
	REMOVE:  {"REMOVE", 'p', '-', '-', '-', "remove path A"},
	RENAME:  {"RENAME", 'p', 'p', '-', '-', "move the value at path A to path B"},
	LIFT:    {"LIFT", 'p', 'r', '-', '-', "move the keys of the map at A to its parent, prefixed with string B"},
	EDITS:   {"EDITS", 'n', 'n', '-', '-', "run the B edits (SET, SETQ, REMOVE, RENAME, LIFT) of Code.Edits from A on, in order"},
	SETTAG:  {"SETTAG", 'r', '-', '-', '-', "%tag = A"},
	SETTIME: {"SETTIME", 'r', '-', '-', '-', "%time = A"},
	SETROOT: {"SETROOT", 'r', '-', '-', '-', "the record = A (a map)"},
	ITER:    {"ITER", 'i', 'r', '-', '-', "start iterator A over B (a map or array)"},
	NEXT:    {"NEXT", 'i', 'w', 'j', '-', "advance iterator A: B = key, B+1 = value; jump to C when done"},
	DROP:    {"DROP", '-', '-', '-', '-', "end the run: drop the record"},
	KEEP:    {"KEEP", '-', '-', '-', '-', "end the run: keep the record"},
	GETG:    {"GETG", 'w', 'p', 'm', '-', "GET, then GUARD: A = the record's value at path B; type_mismatch fault unless its kind is in mask C"},
	ACAT:    {"ACAT", 'w', 'r', 'r', '-', "A = B + C (arrays): B's elements, then C's"},
	GUARDP:  {"GUARDP", 'r', 'm', 'r', '-', "GUARD of A by mask B where C, A's container, is neither absent nor null"},
	SPLIT:   {"SPLIT", 'p', '-', '-', '-', "split the record: one record per element of the array at path A, each running the code after (record.Record.Split decides: type_mismatch when A, or a container on its way, is of another type; split_limit past Limits.MaxSplit or spec.MaxBuilt bytes)"},
	KEY:     {"KEY", 'w', 'r', '-', '-', "A = the key hash of the value B (state.Hasher); type_mismatch fault on a map or an array"},
	KEYMIX:  {"KEYMIX", 'w', 'r', 'r', '-', "A = the key hash of the values hashed in B, then the one hashed in C (state.Combine)"},
	DEDUPE:  {"DEDUPE", 'w', 'r', 't', '-', "end the run, dropping the record (dedupe), when key B was kept within the window of table C; else A = the key's drops since"},
	RATE:    {"RATE", 'r', 't', '-', '-', "end the run, dropping the record (rate_limit), when key A's bucket in table B is empty"},
	SAMPLE:  {"SAMPLE", 'r', 'r', '-', '-', "end the run, dropping the record (sample), unless key A is 0 modulo B (an int)"},
	EVERY:   {"EVERY", 't', '-', '-', '-', "end the run, dropping the record (sample), unless it is the N-th of table A"},
}

// Operands returns the kinds of the operands A, B, C and X of o, one
// character each, as in the table above.
func (o Op) Operands() [4]byte {
	i := ops[o]
	return [4]byte{i.a, i.b, i.c, i.x}
}

// IsEdit reports whether o edits the record by a path, and so may be
// batched into EDITS.
func (o Op) IsEdit() bool {
	switch o {
	case SET, SETQ, REMOVE, RENAME, LIFT:
		return true
	}
	return false
}

// Doc returns a one-line description of o.
func (o Op) Doc() string { return ops[o].doc }

func (o Op) String() string {
	if o < numOps {
		return ops[o].name
	}
	return fmt.Sprintf("op(%d)", o)
}

// validate checks every operand of c against the opcode table, so that the
// interpreter can index without checks failing at run time.
func validate(c *Code) error {
	if c.NumRegs < len(c.Consts) || c.NumRegs > 1<<16 {
		return errors.New("vm: bad register count")
	}
	if n := len(c.Instrs); n == 0 || c.Instrs[n-1].Op != KEEP && c.Instrs[n-1].Op != DROP && c.Instrs[n-1].Op != JMP {
		return errors.New("vm: the code must end with KEEP, DROP or JMP")
	}
	if c.Lines != nil && len(c.Lines) != len(c.Instrs) {
		return errors.New("vm: Lines does not match Instrs")
	}
	if c.Frames != nil && len(c.Frames) != len(c.Instrs) {
		return errors.New("vm: Frames does not match Instrs")
	}
	for _, f := range c.Frames {
		if int(f) >= len(c.Inlines) {
			return fmt.Errorf("vm: frame %d out of range", f)
		}
	}
	for i, in := range c.Inlines {
		if i > 0 && int(in.Parent) >= i {
			return fmt.Errorf("vm: inline %d has a later parent", i)
		}
	}
	for _, p := range c.Paths {
		for _, r := range p.Dyn {
			if int(r) >= c.NumRegs {
				return errors.New("vm: dynamic path step register out of range")
			}
		}
		if len(p.Dyn) != len(p.DynAt) {
			return errors.New("vm: Dyn and DynAt differ in length")
		}
		for _, at := range p.DynAt {
			if at < 0 || at >= len(p.Steps) {
				return errors.New("vm: dynamic step out of range")
			}
		}
	}
	for i, in := range c.Edits {
		if !in.Op.IsEdit() {
			return fmt.Errorf("vm: edit %d: %s is not an edit", i, in.Op)
		}
	}
	all := append(append([]Instr(nil), c.Instrs...), c.Edits...)
	for pc, in := range all {
		if in.Op == EDITS && int(in.A)+int(in.B) > len(c.Edits) {
			return fmt.Errorf("vm: %d: EDITS out of range", pc)
		}
		if in.Op >= numOps {
			return fmt.Errorf("vm: %d: bad opcode %d", pc, in.Op)
		}
		info := ops[in.Op]
		for _, o := range [...]struct {
			kind byte
			v    int
		}{{info.a, int(in.A)}, {info.b, int(in.B)}, {info.c, int(in.C)}, {info.x, int(in.X)}} {
			var limit int
			switch o.kind {
			case '-', 'n', 'm':
				continue
			case 'w':
				if o.v < len(c.Consts) {
					return fmt.Errorf("vm: %d: %s writes constant register %d", pc, in.Op, o.v)
				}
				limit = c.NumRegs
			case 'r':
				limit = c.NumRegs
			case 'p':
				limit = len(c.Paths)
			case 'j':
				limit = len(c.Instrs)
			case 's':
				limit = len(c.Sets)
			case 'e':
				if f := builtin.ByID(builtin.ID(in.X)); f != nil && f.RegexArg >= 0 {
					limit = len(c.Regexps)
				} else {
					continue
				}
			case 'i':
				limit = c.Iters
			case 't':
				limit = len(c.States)
			case 'b':
				limit = c.Builders
			case 'f':
				if int(in.X) >= len(builtins) || builtins[in.X] == nil {
					return fmt.Errorf("vm: %d: the VM has no built-in %s", pc, builtin.ID(in.X))
				}
				continue
			}
			if o.v >= limit {
				return fmt.Errorf("vm: %d: %s operand %d out of range (%c < %d)", pc, in.Op, o.v, o.kind, limit)
			}
		}
		if in.Op == CALL && int(in.B)+CallArgs(in) > c.NumRegs {
			return fmt.Errorf("vm: %d: CALL arguments out of range", pc)
		}
		if in.Op == NEXT && int(in.B)+1 >= c.NumRegs {
			return fmt.Errorf("vm: %d: NEXT value register out of range", pc)
		}
	}
	return nil
}
