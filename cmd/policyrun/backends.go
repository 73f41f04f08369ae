package main

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/policytest"
	"github.com/policyrun/policyrun/lua"
)

// backends are the policy backends that --backend chooses from, by name;
// eval uses the first by default, test runs them all.
var backends = []policytest.Backend{
	compiler.VMBackend(),
	lua.Backend{},
}

// selectBackends resolves a --backend value: a backend's name, or "all".
func selectBackends(name string) ([]policytest.Backend, error) {
	if name == "all" {
		return backends, nil
	}
	for _, b := range backends {
		if b.Name() == name {
			return []policytest.Backend{b}, nil
		}
	}
	return nil, fmt.Errorf("unknown backend %q (want %s or all)", name, backendNames())
}

// backendNames lists the backends' names: "vm|lua".
func backendNames() string {
	var names []string
	for _, b := range backends {
		names = append(names, b.Name())
	}
	return strings.Join(names, "|")
}
