package pipeline

import (
	"fmt"

	"github.com/policyrun/policyrun/pipeline/config"
)

// NewStage builds the processor of a filter from its config.
func NewStage(f config.Filter, dir string) (Processor, error) {
	return nil, fmt.Errorf("backend %q is not available yet", f.Backend)
}
