// Package testsync holds what concurrent tests share: a buffer goroutines
// write to while the test reads it, and a wait for a condition to hold.
package testsync

import (
	"bytes"
	"sync"
	"time"
)

// Buffer is a bytes.Buffer that may be written and read at once: a
// logger's or a child process's output that a test watches.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Eventually polls cond every 5 ms until it holds or d has passed, and
// reports whether it held.
func Eventually(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
