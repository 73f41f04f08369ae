package vm

import (
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/policyrun/policyrun/internal/strftime"
	"github.com/policyrun/policyrun/record"

	"github.com/policyrun/policyrun/internal/builtin"
)

// Disasm writes the program readably: a header with what it reads and
// writes (Access), its constants, paths, sets and regexes, then one line
// per instruction with its operands decoded.
func (p *Program) Disasm(w io.Writer) error {
	c := &p.code
	var b strings.Builder
	onFault := "keep"
	if c.OnFaultDrop {
		onFault = "drop"
	}
	schema := ""
	if c.OTLP {
		schema = ", schema otlp"
	}
	fmt.Fprintf(&b, "policy %q on_fault %s%s: %d instructions, %d registers (%d constants)\n", c.Name, onFault, schema, len(c.Instrs), c.NumRegs, len(c.Consts))
	appendAccess(&b, &p.access)
	if len(c.Consts) > 0 {
		b.WriteString("constants:\n")
		for i := range c.Consts {
			fmt.Fprintf(&b, "  r%-4d %s\n", i, regString(&c.Consts[i]))
		}
	}
	if len(c.Paths) > 0 {
		b.WriteString("paths:\n")
		for i := range c.Paths {
			fmt.Fprintf(&b, "  p%-4d %s\n", i, pathString(&c.Paths[i]))
		}
	}
	for i, s := range c.Sets {
		fmt.Fprintf(&b, "set s%d: [", i)
		for j := range s.all {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(regString(&s.all[j]))
		}
		b.WriteString("]\n")
	}
	for i, re := range c.Regexps {
		fmt.Fprintf(&b, "regex e%d: %s\n", i, strconv.Quote(re.String()))
	}
	b.WriteString("code:\n")
	line, frame := int32(-1), uint16(0)
	for pc, in := range c.Instrs {
		f := uint16(0)
		if c.Frames != nil {
			f = c.Frames[pc]
		}
		if c.Lines != nil && (c.Lines[pc] != line || f != frame) {
			line, frame = c.Lines[pc], f
			fmt.Fprintf(&b, "  ; line %d%s%s\n", line, ofFile(c, f), inlinedAt(c, f))
		}
		fmt.Fprintf(&b, "  %4d  %-8s", pc, in.Op)
		b.WriteString(operands(c, in))
		b.WriteByte('\n')
		if in.Op == EDITS {
			for _, e := range c.Edits[in.A : in.A+in.B] {
				fmt.Fprintf(&b, "          %-8s%s\n", e.Op, operands(c, e))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// inlinedAt says which inlined calls hold the code of frame f: "" for the
// policy's own code, else ", fn f inlined at line 12" and so on outwards.
func inlinedAt(c *Code, f uint16) string {
	var b strings.Builder
	for f != 0 {
		in := c.Inlines[f]
		fmt.Fprintf(&b, ", in fn %s inlined at line %d%s", in.Func, in.Line, ofFile(c, in.Parent))
		f = in.Parent
	}
	return b.String()
}

// ofFile names the file of the code of frame f when it is a module's:
// " of net.policy", and "" for the policy's own.
func ofFile(c *Code, f uint16) string {
	if f == 0 || c.Inlines[f].File == "" {
		return ""
	}
	return " of " + path.Base(c.Inlines[f].File)
}

// operands decodes the operands of in.
func operands(c *Code, in Instr) string {
	{
		info := ops[in.Op]
		var parts []string
		for _, o := range [...]struct {
			kind byte
			v    int
		}{{info.a, int(in.A)}, {info.b, int(in.B)}, {info.c, int(in.C)}, {info.x, int(in.X)}} {
			switch o.kind {
			case '-':
			case 'w', 'r':
				parts = append(parts, "r"+strconv.Itoa(o.v))
			case 'p':
				parts = append(parts, "p"+strconv.Itoa(o.v)+" "+pathString(&c.Paths[o.v]))
			case 'j':
				parts = append(parts, "->"+strconv.Itoa(o.v))
			case 's':
				parts = append(parts, "s"+strconv.Itoa(o.v))
			case 'e':
				switch callKind(in.X) {
				case callRegex:
					parts = append(parts, "e"+strconv.Itoa(o.v))
				case callVariadic:
					parts = append(parts, strconv.Itoa(o.v)+" args")
				}
			case 'm':
				parts = append(parts, Mask(o.v).String())
			case 'i':
				parts = append(parts, "it"+strconv.Itoa(o.v))
			case 't':
				parts = append(parts, "t"+strconv.Itoa(o.v)+" "+c.States[o.v].Kind.String())
			case 'b':
				parts = append(parts, "b"+strconv.Itoa(o.v))
			case 'n':
				parts = append(parts, strconv.Itoa(o.v))
			case 'f':
				parts = append(parts, builtin.ID(o.v).String())
			}
		}
		return strings.Join(parts, ", ")
	}
}

func pathString(p *Path) string {
	if len(p.Dyn) == 0 {
		return p.Steps.String()
	}
	var b strings.Builder
	for i, s := range p.Steps {
		dyn := -1
		for j, at := range p.DynAt {
			if at == i {
				dyn = int(p.Dyn[j])
			}
		}
		switch {
		case dyn >= 0:
			fmt.Fprintf(&b, "[r%d]", dyn)
		default:
			b.WriteString(record.Path{s}.String())
		}
	}
	return b.String()
}

func regString(r *Reg) string {
	switch r.K {
	case record.Absent:
		return "absent"
	case record.Null:
		return "null"
	case record.Bool:
		return strconv.FormatBool(r.N != 0)
	case record.Int:
		return strconv.FormatInt(r.int(), 10)
	case record.Float:
		return string(record.AppendFloat(nil, r.float()))
	case record.String:
		return strconv.Quote(r.S)
	case record.Timestamp:
		return string(strftime.AppendFormat(nil, r.int(), "%FT%T.%NZ"))
	}
	return r.K.String()
}
