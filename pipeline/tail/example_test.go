package tail_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
	"github.com/policyrun/policyrun/pipeline/tail"
)

// The pipeline's loop: poll, deliver, commit, save. A checkpoint is saved
// only after the lines it covers were delivered, so a crash repeats at most
// the batch in flight and loses nothing.
func Example() {
	dir, err := os.MkdirTemp("", "tail-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "app.log"), []byte("first\r\nsecond\nthird"), 0o644); err != nil {
		log.Fatal(err)
	}

	store := checkpoint.NewStore(checkpoint.FileStorage{Path: filepath.Join(dir, "tail.db")})
	cp, _, err := store.Load()
	if err != nil {
		// Corrupt: report it and start afresh, as read_from_head says.
		log.Printf("checkpoint: %v", err)
	}
	t, err := tail.New(tail.Config{
		Paths:        []string{filepath.Join(dir, "*.log")},
		ReadFromHead: true,
		ExitOnEOF:    true,
	}, cp)
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()
	for {
		batch, err := t.Poll(context.Background())
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			log.Fatal(err)
		}
		for _, l := range batch.Lines {
			fmt.Printf("%s:%d %q\n", l.File.Name, l.RecordNum, l.Bytes) // the outputs
		}
		t.Commit(batch.Cursor)
		if err := store.Save(t.Checkpoint()); err != nil {
			log.Fatal(err)
		}
	}
	saved, format, err := store.Load()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(format, saved.Files[0].Offset, saved.Files[0].RecordNum)
	// Output:
	// app.log:1 "first"
	// app.log:2 "second"
	// app.log:3 "third"
	// protobuf 19 3
}
