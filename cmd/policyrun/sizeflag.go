package main

import (
	"fmt"
	"strconv"

	"github.com/policyrun/policyrun/pipeline/config"
)

// sizeFlag is a flag of bytes written as a pipeline config writes sizes:
// 1000, 32k, 64M, 1G (K, M and G are powers of 1024; B and iB may follow).
type sizeFlag int64

func (s *sizeFlag) String() string {
	switch v := int64(*s); {
	case v != 0 && v%(1<<20) == 0:
		return fmt.Sprintf("%dM", v>>20)
	case v != 0 && v%(1<<10) == 0:
		return fmt.Sprintf("%dK", v>>10)
	default:
		return strconv.FormatInt(v, 10)
	}
}

func (s *sizeFlag) Set(text string) error {
	v, ok := config.ParseSize(text)
	if !ok {
		return fmt.Errorf("expected a size such as 1000, 32k or 64M, found %q", text)
	}
	*s = sizeFlag(v)
	return nil
}
