package lua

import (
	"fmt"

	"github.com/policyrun/policyrun/compiler/types"
)

// Guards: the kind checks of values read where a type is declared or
// narrowed, as the VM's GUARD does them.

// isRaw reports whether values of type t are held unboxed: floats are
// plain Lua numbers where the type says float, and boxed everywhere else.
func isRaw(t *types.Type) bool {
	return t != nil && types.NonOptional(t).Kind == types.Float
}

// guardCall returns a call that checks the kind of v against t, or "" when
// every value fits. Guards are shallow, as the VM's: the elements of an
// array or map are checked where they are used (for binds them, join reads
// them), not when the container is read.
func (g *gen) guardCall(v string, t *types.Type) string {
	if _, ok := guardSpec(t); !ok {
		return ""
	}
	k, opt := guardKind(t)
	call := fmt.Sprintf("chk(%s, %q, %t)", v, k, opt)
	// The common case inline: chk runs only when the kind looks wrong.
	switch k {
	case "string", "boolean", "int":
		lt := map[string]string{"string": "string", "boolean": "boolean", "int": "number"}[k]
		return fmt.Sprintf("if type(%s) ~= %q then %s end", v, lt, call)
	case "bool":
		return fmt.Sprintf("if type(%s) ~= \"boolean\" then %s end", v, call)
	case "map":
		return fmt.Sprintf("if getmetatable(%s) ~= MAP then %s end", v, call)
	}
	return call
}

func guardKind(t *types.Type) (string, bool) {
	opt := t.IsOptional()
	switch k := types.NonOptional(t).Kind; k {
	case types.Any, types.Null, types.Bool, types.Int, types.Float, types.String, types.Bytes, types.Timestamp, types.Array:
		return k.String(), opt // the runtime's chk knows the kinds by these names
	case types.Map, types.Object:
		return "map", opt
	}
	return "", opt
}

// guardSpec reports whether t constrains a value at all.
func guardSpec(t *types.Type) (string, bool) {
	if t == nil || t.IsInvalid() || t.Kind == types.Never {
		return "", false
	}
	k, opt := guardKind(t)
	if k == "" || k == "any" && opt {
		return "", false
	}
	return k, true
}
