package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/policyrun/policyrun/policy"
)

// fmtCommand is `policyrun fmt [--check] [-w] FILE|DIR...`. Without flags it
// prints the formatted files; -w rewrites the files that change; --check
// lists them and exits 1 if there are any. "-" formats standard input.
func fmtCommand(fl *flag.FlagSet) runFunc {
	check := fl.Bool("check", false, "list the files whose layout differs, and exit 1 if any does")
	write := fl.Bool("w", false, "write the result back to the files instead of printing it")
	return func(c *call) int {
		if *check && *write {
			fmt.Fprintln(c.stderr, "policyrun fmt: use either --check or -w, not both")
			return 2
		}

		status := 0
		fail := func(code int) {
			status = max(status, code)
		}
		var files []string
		for _, arg := range fl.Args() {
			if arg == "-" {
				if *write {
					fmt.Fprintln(c.stderr, "policyrun fmt: cannot use -w with standard input")
					return 2
				}
				files = append(files, arg)
				continue
			}
			found, err := policy.Files(arg)
			if err != nil {
				fmt.Fprintf(c.stderr, "policyrun fmt: %v\n", err)
				fail(2)
				continue
			}
			files = append(files, found...)
		}

		for _, name := range files {
			var src []byte
			var err error
			if name == "-" {
				src, err = io.ReadAll(c.stdin)
				name = "<stdin>"
			} else {
				src, err = policy.ReadFile(name)
			}
			if err != nil {
				fmt.Fprintf(c.stderr, "policyrun fmt: %v\n", err)
				fail(2)
				continue
			}
			out, err := policy.FormatSource(name, src)
			if err != nil {
				var errs policy.ErrorList
				if errors.As(err, &errs) {
					io.WriteString(c.stderr, errs.Report(name))
				} else {
					fmt.Fprintf(c.stderr, "%s: %v\n", name, err)
				}
				fail(1)
				continue
			}
			changed := !bytes.Equal(src, out)
			switch {
			case *check:
				if changed {
					fmt.Fprintln(c.stdout, name)
					fail(1)
				}
			case *write:
				if changed {
					if err := fmtWriteFile(name, out); err != nil {
						fmt.Fprintf(c.stderr, "policyrun fmt: %v\n", err)
						fail(2)
					}
				}
			default:
				c.stdout.Write(out)
			}
		}
		return status
	}
}

// fmtWriteFile replaces name with data, keeping its permissions. It writes
// a temporary file next to it and renames it, so that a failure half-way
// never leaves a truncated policy behind.
func fmtWriteFile(name string, data []byte) error {
	info, err := os.Stat(name)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".fmt-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), info.Mode().Perm())); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
