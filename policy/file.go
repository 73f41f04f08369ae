package policy

import (
	"fmt"
	"io"
	"os"
)

// MaxFileSize is the largest policy or script file ReadFile reads: far
// past any policy written by hand (a 200,000-line generated one is 4 MB),
// and a bound on what a path that names a device costs.
const MaxFileSize = 16 << 20

// ReadFile reads a policy, module or script file for check, eval, test
// and the pipeline. It refuses what is not a regular file before opening
// it — a FIFO blocks its reader until a writer comes (run and run --check
// hung past SIGTERM), /dev/zero never ends (it grew to 24 GB) — and a file
// over MaxFileSize.
func ReadFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, kindOf(fi.Mode()))
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: %d bytes, over the %d bytes a policy file may have", path, fi.Size(), MaxFileSize)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have grown, or been replaced, since Stat.
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s: over the %d bytes a policy file may have", path, MaxFileSize)
	}
	return b, nil
}

func kindOf(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}
