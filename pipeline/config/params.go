package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/spec"
)

// params reads a policy filter's params: a map from parameter names to
// YAML values. The values are checked against the policy's declared types
// when the stage loads it, so that every mistake is reported at once with
// its line; here only the shape is.
func (d *decoder) params(n *yaml.Node) spec.Params {
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, "params must be a map from parameter names to values, such as params: {env: prod, keep: 3}")
		return nil
	}
	ps := spec.Params{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := ps[k.Value]; dup {
			d.errorf(k.Line, "params: %s is given twice", k.Value)
			continue
		}
		var x any
		if err := v.Decode(&x); err != nil {
			d.errorf(v.Line, "params: %s: %v", k.Value, err)
			continue
		}
		ps[k.Value] = spec.Param{Value: x, Where: fmt.Sprintf("%s line %d", d.file, v.Line)}
	}
	return ps
}
