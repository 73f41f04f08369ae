package main

import (
	"fmt"
	"strconv"
	"strings"
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
	t := strings.ToUpper(strings.TrimSpace(text))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return fmt.Errorf("expected a size such as 1000, 32k or 64M, found %q", text)
	}
	*s = sizeFlag(v * mult)
	return nil
}
