package grid

import (
	"strconv"
	"strings"
)

// lineIndex maps the keys of a grid file to the lines that define them.
//
// BurntSushi/toml records key positions, but keeps them private and keyed by
// dotted path, so every [[sweep]] block's "model" is the same key
// "sweep.model" and only the last block's line survives. Error messages must
// point at the right block, so this small scanner reads the lines itself.
// It understands what grids use (tables, arrays of tables, dotted and
// quoted keys, multi-line arrays and strings); a key it cannot place falls
// back to its block's header line.
type lineIndex struct {
	headers map[string]int // block name ("defaults", "sweep#0", ...) -> header line
	keys    map[string]int // block name + "\x00" + dotted key -> first line
	top     map[string]int // top-level key or table name -> first line
}

// sweepBlockName names the i-th [[sweep]] block (0-based) in a lineIndex.
func sweepBlockName(i int) string { return "sweep#" + strconv.Itoa(i) }

// line returns the line of key (a dotted path) in block, trying the key's
// parent tables and then the block header; 0 if nothing matches.
func (ix *lineIndex) line(block, key string) int {
	if l, ok := ix.keyLine(block, key); ok {
		return l
	}
	if l, ok := ix.headers[block]; ok {
		return l
	}
	if block == "defaults" {
		return ix.top["defaults"]
	}
	return 0
}

// keyLine returns the line of key (a dotted path) in block, or of the
// nearest parent table of it the block sets, and whether there is one.
func (ix *lineIndex) keyLine(block, key string) (int, bool) {
	for key != "" {
		if l, ok := ix.keys[block+"\x00"+key]; ok {
			return l, true
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0, false
}

// scanLines builds the index. It never fails: a file it misreads still
// parsed with the TOML library, and the worst case is a less precise line.
func scanLines(src string) *lineIndex {
	ix := &lineIndex{headers: map[string]int{}, keys: map[string]int{}, top: map[string]int{}}
	var (
		context    []string // current table path
		sweep      = -1     // index of the current [[sweep]] block
		st         scanState
		lines      = strings.Split(src, "\n")
		recordPath = func(path []string, line int) {
			if len(path) == 0 {
				return
			}
			block, rest := "", path
			switch path[0] {
			case "defaults":
				block, rest = "defaults", path[1:]
			case "sweep":
				block, rest = sweepBlockName(sweep), path[1:]
			case "search":
				block, rest = "search", path[1:]
			default:
				if _, ok := ix.top[path[0]]; !ok {
					ix.top[path[0]] = line
				}
				return
			}
			if _, ok := ix.top[path[0]]; !ok {
				ix.top[path[0]] = line
			}
			for i := 1; i <= len(rest); i++ {
				k := block + "\x00" + strings.Join(rest[:i], ".")
				if _, ok := ix.keys[k]; !ok {
					ix.keys[k] = line
				}
			}
		}
	)
	for n, raw := range lines {
		lineNo := n + 1
		if st.inString != "" || st.depth > 0 {
			st.scan(raw)
			continue
		}
		s := strings.TrimSpace(raw)
		switch {
		case s == "" || s[0] == '#':
			continue
		case strings.HasPrefix(s, "[["):
			path, ok := parseKeyPath(strings.TrimPrefix(s, "[["), "]]")
			if !ok {
				continue
			}
			context = path
			if len(path) == 1 && path[0] == "sweep" {
				sweep++
				ix.headers[sweepBlockName(sweep)] = lineNo
				if _, ok := ix.top["sweep"]; !ok {
					ix.top["sweep"] = lineNo
				}
				continue
			}
			recordPath(path, lineNo)
		case s[0] == '[':
			path, ok := parseKeyPath(s[1:], "]")
			if !ok {
				continue
			}
			context = path
			if len(path) == 1 && path[0] == "defaults" {
				ix.headers["defaults"] = lineNo
			}
			recordPath(path, lineNo)
		default:
			i := strings.IndexByte(s, '=')
			if i < 0 {
				continue
			}
			path, ok := parseKeyPath(s[:i]+"=", "=")
			if !ok {
				continue
			}
			recordPath(append(append([]string(nil), context...), path...), lineNo)
			st.scan(s[i+1:])
		}
	}
	return ix
}

// parseKeyPath parses a dotted TOML key (bare or quoted parts) that ends
// with terminator, e.g. `eval.hits =` or `sweep.pll_weights]]`.
func parseKeyPath(s, terminator string) ([]string, bool) {
	var path []string
	for {
		s = strings.TrimLeft(s, " \t")
		var part string
		switch {
		case strings.HasPrefix(s, `"`), strings.HasPrefix(s, `'`):
			q := s[:1]
			end := strings.Index(s[1:], q)
			if end < 0 {
				return nil, false
			}
			part, s = s[1:1+end], s[2+end:]
		default:
			end := 0
			for end < len(s) && isBareKeyChar(s[end]) {
				end++
			}
			if end == 0 {
				return nil, false
			}
			part, s = s[:end], s[end:]
		}
		path = append(path, part)
		s = strings.TrimLeft(s, " \t")
		switch {
		case strings.HasPrefix(s, "."):
			s = s[1:]
		case strings.HasPrefix(s, terminator):
			return path, true
		default:
			return nil, false
		}
	}
}

func isBareKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// scanState follows a value across lines: open brackets and multi-line
// strings, so that their contents are not mistaken for keys.
type scanState struct {
	depth    int
	inString string // the closing delimiter of an open multi-line string
}

func (st *scanState) scan(s string) {
	for i := 0; i < len(s); i++ {
		if st.inString != "" {
			end := strings.Index(s[i:], st.inString)
			if end < 0 {
				return
			}
			i += end + len(st.inString) - 1
			st.inString = ""
			continue
		}
		switch c := s[i]; c {
		case '#':
			return
		case '[', '{':
			st.depth++
		case ']', '}':
			if st.depth > 0 {
				st.depth--
			}
		case '"', '\'':
			delim := string(c)
			if strings.HasPrefix(s[i:], strings.Repeat(delim, 3)) {
				st.inString = strings.Repeat(delim, 3)
				i += 2
				continue
			}
			j := i + 1
			for j < len(s) && s[j] != c {
				if c == '"' && s[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		}
	}
}
