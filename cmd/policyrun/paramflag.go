package main

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/spec"
)

// paramFlag is the repeatable --param name=value. The text after '=' is
// kept raw: whether it is a bare string or JSON depends on the type the
// policy declares, which the checker knows (spec.Param.Raw).
type paramFlag spec.Params

func (p paramFlag) String() string { return "" }

func (p paramFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, as in env=prod or keep=3")
	}
	if _, dup := p[name]; dup {
		return fmt.Errorf("%s is given twice", name)
	}
	p[name] = spec.Param{Value: value, Raw: true, Where: "--param " + name}
	return nil
}
