package query

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"gekc/kg"
)

// ReadTriples reads the file at path with ParseTriples.
func (a *Answerer) ReadTriples(path string) ([][3]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return a.ParseTriples(f, path)
}

// ParseTriples reads lines "subject<TAB>relation<TAB>object" of names from
// r and looks them up. Blank lines and lines that start with # are
// skipped; a trailing '\r' is ignored. Errors are *kg.LineError values
// "name:line: ...": a line without three fields, or an unknown name (a
// *kg.NameError that suggests close names). No triples at all is an
// error too.
func (a *Answerer) ParseTriples(r io.Reader, name string) ([][3]int, error) {
	var out [][3]int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		p := strings.Split(text, "\t")
		if len(p) != 3 {
			return nil, &kg.LineError{File: name, Line: line,
				Err: fmt.Errorf("want subject<TAB>relation<TAB>object, got %d fields", len(p))}
		}
		var t [3]int
		for i, kind := range []string{"entity", "relation", "entity"} {
			v := a.ds.Entities
			if i == 1 {
				v = a.ds.Relations
			}
			id, err := v.Lookup(kind, p[i])
			if err != nil {
				return nil, &kg.LineError{File: name, Line: line, Err: err}
			}
			t[i] = int(id)
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no triples", name)
	}
	return out, nil
}
