// Command testprogress turns the output of `go test -json` into a few lines
// per package: one when its tests start, one when they end (as `go test`
// prints it), and every 30 seconds the packages still running, so that a
// long `make test` is never silent. The output of failing tests, build
// errors and anything that is not JSON is printed in full. It exits 1 if a
// package failed or the input had no result for it.
//
//	go test -json ./... | go run ./scripts/testprogress
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout, 30*time.Second))
}

type pkgState struct {
	started time.Time
	output  []string            // package-level output
	tests   map[string][]string // test -> its output, until it passes or fails
	done    bool
}

func run(in io.Reader, out io.Writer, every time.Duration) int {
	var mu sync.Mutex
	pkgs := map[string]*pkgState{}
	failed := false
	begin := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				mu.Lock()
				var running []string
				done := 0
				for name, p := range pkgs {
					if p.done {
						done++
					} else {
						running = append(running, fmt.Sprintf("%s (%s)", name, time.Since(p.started).Round(time.Second)))
					}
				}
				slices.Sort(running)
				if len(running) == 0 {
					fmt.Fprintf(out, "... compiling (%s so far, %d packages done)\n", time.Since(begin).Round(time.Second), done)
				} else {
					fmt.Fprintf(out, "... running %s\n", strings.Join(running, ", "))
				}
				mu.Unlock()
			}
		}
	}()

	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			mu.Lock()
			fmt.Fprintf(out, "%s\n", line) // e.g. a go command error
			failed = true
			mu.Unlock()
			continue
		}
		mu.Lock()
		failed = handle(out, pkgs, e) || failed
		mu.Unlock()
	}
	mu.Lock()
	defer mu.Unlock()
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testprogress: %v\n", err)
		failed = true
	}
	for name, p := range pkgs {
		if !p.done {
			fmt.Fprintf(out, "FAIL\t%s\t(no result)\n", name)
			failed = true
		}
	}
	if failed {
		fmt.Fprintf(out, "FAIL (%s)\n", time.Since(begin).Round(time.Second))
		return 1
	}
	fmt.Fprintf(out, "all tests passed (%s)\n", time.Since(begin).Round(time.Second))
	return 0
}

// handle prints what event e calls for and reports whether it is a failure.
func handle(out io.Writer, pkgs map[string]*pkgState, e event) bool {
	switch e.Action {
	case "build-output":
		fmt.Fprint(out, e.Output)
		return false
	case "build-fail":
		return true
	}
	if e.Package == "" {
		return false
	}
	p := pkgs[e.Package]
	if p == nil {
		p = &pkgState{started: time.Now(), tests: map[string][]string{}}
		pkgs[e.Package] = p
	}
	if e.Test != "" {
		switch e.Action {
		case "output":
			p.tests[e.Test] = append(p.tests[e.Test], e.Output)
		case "pass", "skip":
			delete(p.tests, e.Test)
		case "fail":
			for _, l := range p.tests[e.Test] {
				fmt.Fprint(out, l)
			}
			delete(p.tests, e.Test)
		}
		return false
	}
	switch e.Action {
	case "start":
		fmt.Fprintf(out, "running %s\n", e.Package)
	case "output":
		p.output = append(p.output, e.Output)
	case "pass", "skip":
		p.done = true
		if e.Action == "skip" {
			fmt.Fprintf(out, "?   \t%s\t[no test files]\n", e.Package)
		} else {
			fmt.Fprintf(out, "ok  \t%s\t%.1fs\n", e.Package, e.Elapsed)
		}
	case "fail":
		p.done = true
		// A test that never ended (a timeout's panic, a crash) has its
		// output, the panic and goroutine dump included, still buffered
		// under its name: it is the cause, so it comes first, in name order.
		for _, name := range slices.Sorted(maps.Keys(p.tests)) {
			for _, l := range p.tests[name] {
				fmt.Fprint(out, l)
			}
		}
		for _, l := range p.output {
			if !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- PASS") && !strings.HasPrefix(l, "PASS") {
				fmt.Fprint(out, l)
			}
		}
		// go test ends a failed package with "FAIL\t<package>\t<time>"
		// or "... [build failed]"; say it when it did not.
		if len(p.output) == 0 || !strings.HasPrefix(p.output[len(p.output)-1], "FAIL\t"+e.Package) {
			fmt.Fprintf(out, "FAIL\t%s\t%.1fs\n", e.Package, e.Elapsed)
		}
		return true
	}
	return false
}
