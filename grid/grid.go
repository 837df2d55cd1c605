package grid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Grid is a parsed grid file expanded into runs.
type Grid struct {
	Name        string // the file's `name`, else its base name without .toml
	named       bool   // Name came from the file's `name` key
	Description string
	// NotPaper is the file's paper = false: its runs do not follow the
	// paper's protocol (a KTD feature map trained as another paper's), so
	// no paper.md sets them beside the paper's Table 2.
	NotPaper   bool
	Path       string
	Source     []byte // the file as read, copied to <out>/grid.toml
	Runs       []Run
	Duplicates int // expanded runs dropped because an earlier block produced the same spec
	// Search is the grid's [search] section; nil when it has none.
	Search *Search
}

// Named reports whether Name came from the file's name key rather than
// from its file name.
func (g *Grid) Named() bool { return g.named }

// Run is one expanded run of a grid.
type Run struct {
	Index int // position in Grid.Runs: what -only and SLURM array tasks count
	ID    string
	Spec  RunSpec
	Block string // "[defaults]" or "[[sweep]] block 2"
	Line  int    // the block header's line in the grid file
}

// LoadGrid reads, parses and expands a grid file; see ParseGrid.
func LoadGrid(path string, validate Validator) (*Grid, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading grid: %w", err)
	}
	return ParseGrid(path, src, validate)
}

// rawGrid is the top level of a grid file. Blocks stay untyped because any
// key may be a scalar or a sweep axis; parseBlock checks them against RunSpec.
type rawGrid struct {
	Name        string           `toml:"name"`
	Description string           `toml:"description"`
	Paper       *bool            `toml:"paper"`
	Defaults    map[string]any   `toml:"defaults"`
	Sweep       []map[string]any `toml:"sweep"`
	Search      *Search          `toml:"search"`
}

// ParseGrid parses a grid and expands every block into runs: blocks in file
// order, and within a block the Cartesian product of its axes in RunSpec
// field order (seed varying fastest). Each run is checked by validate (nil
// means DefaultValidator). Errors name path:line.
func ParseGrid(path string, src []byte, validate Validator) (*Grid, error) {
	if validate == nil {
		validate = DefaultValidator
	}
	ix := scanLines(string(src))
	var raw rawGrid
	md, err := toml.Decode(string(src), &raw)
	if err != nil {
		return nil, tomlError(path, ix, err)
	}
	// Every problem found is reported, each with its line, so that a grid
	// with three mistakes needs one correction, not three runs.
	var errs []error
	// Only the top level is typed, so Undecoded reports unknown top-level keys
	// and tables (e.g. a misspelt [default]); keys inside blocks are checked
	// against RunSpec below.
	for _, k := range md.Undecoded() {
		if k[0] == "defaults" || k[0] == "sweep" {
			continue
		}
		if k[0] == "search" && len(k) > 1 {
			errs = append(errs, fmt.Errorf("%s:%d: [search]: unknown key %q; it has the keys method, min_epochs, max_epochs, eta and metric",
				path, max(ix.line("search", k[1]), ix.top["search"], 1), k[1]))
			continue
		}
		errs = append(errs, fmt.Errorf("%s:%d: unknown top-level key %q; a grid has the keys name, description and paper, a [defaults] block, [[sweep]] blocks and a [search] section",
			path, max(ix.top[k[0]], 1), k.String()))
	}

	g := &Grid{Name: raw.Name, named: raw.Name != "", Description: raw.Description, Path: path, Source: src,
		NotPaper: raw.Paper != nil && !*raw.Paper}
	if g.Name == "" {
		g.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if strings.ContainsAny(g.Name, `/\`) || g.Name == "." || g.Name == ".." {
		errs = append(errs, fmt.Errorf("%s:%d: name %q must not contain a path separator: it names the results directory",
			path, max(ix.top["name"], 1), g.Name))
	}

	if raw.Search != nil {
		raw.Search.Line = ix.top["search"]
		g.Search = raw.Search
		searchEpochs(path, ix, &raw)
	}
	p := gridParser{path: path, ix: ix}
	defaults, berrs := p.parseBlock("defaults", "[defaults]", raw.Defaults)
	errs = append(errs, berrs...)
	blocks := make([]block, 0, len(raw.Sweep))
	for i, m := range raw.Sweep {
		b, berrs := p.parseBlock(sweepBlockName(i), fmt.Sprintf("[[sweep]] block %d", i+1), m)
		errs = append(errs, berrs...)
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		// A grid without [[sweep]] blocks is its [defaults], possibly with axes.
		blocks = append(blocks, defaults)
	}
	placeholders, missingErrs := p.checkRequired(defaults, blocks)
	errs = append(errs, missingErrs...)

	seen := map[string]int{} // ID -> index in g.Runs
	total := 0
	for _, b := range blocks {
		n := blockSize(defaults, b)
		if total += n; n > maxRuns || total > maxRuns {
			return nil, fmt.Errorf("%s:%d: %s: the grid expands to more than %d runs; split it into several grids", path, b.line, b.label, maxRuns)
		}
	}
	fromDefaults := map[string]bool{} // causes placed in [defaults], reported once
	for bi, b := range blocks {
		// A block missing required keys is validated with stand-ins for
		// them, so that its other mistakes (an unknown model, say) show now
		// rather than after the missing keys are added; its runs are not
		// named, since the stand-ins would be in their IDs.
		b.assigns = append(b.assigns, placeholders[bi]...)
		invalid := map[string]int{} // message -> index in errs, for runs failing alike
		repeats := map[string]int{}
		for _, spec := range expandBlock(defaults, b) {
			id := spec.ID()
			if err := validate(spec); err != nil {
				who := "run " + id
				if len(placeholders[bi]) > 0 {
					who = "its runs"
				}
				for _, part := range causes(err) {
					// Each cause at its key's line: in this block, else in
					// [defaults] (once for all its runs), else the block's.
					at, label, key := p.keyLine(&b, &defaults, part)
					msg := fmt.Sprintf("%s:%d: %s: %s", path, at, label, part)
					if key == "defaults" {
						if !fromDefaults[msg] {
							fromDefaults[msg] = true
							errs = append(errs, fmt.Errorf("%s:%d: %s: %w", path, at, label, part))
						}
						continue
					}
					if _, dup := invalid[msg]; dup {
						repeats[msg]++
						continue
					}
					invalid[msg] = len(errs)
					errs = append(errs, fmt.Errorf("%s:%d: %s: %s: %w", path, at, label, who, part))
				}
				continue
			}
			if len(placeholders[bi]) > 0 {
				continue
			}
			if i, dup := seen[id]; dup {
				first := g.Runs[i]
				if !reflect.DeepEqual(first.Spec, spec) {
					errs = append(errs, fmt.Errorf("%s:%d: %s: run %s has the ID of run %d (%s, line %d) but a different spec; they may differ only in samples or eval.batch_size, which the ID ignores: set those in one place",
						path, b.line, b.label, id, first.Index, first.Block, first.Line))
				}
				g.Duplicates++
				continue
			}
			seen[id] = len(g.Runs)
			g.Runs = append(g.Runs, Run{Index: len(g.Runs), ID: id, Spec: spec, Block: b.label, Line: b.line})
		}
		for msg, n := range repeats {
			i := invalid[msg]
			errs[i] = fmt.Errorf("%w (and %d more runs of this block)", errs[i], n)
		}
	}
	if g.Search != nil {
		errs = append(errs, g.Search.check(path, everyOf(g.Runs))...)
	}
	if len(errs) > 0 {
		sortByLine(path, errs)
		return nil, JoinCapped(errs, 20)
	}
	if len(g.Runs) == 0 {
		return nil, fmt.Errorf("%s: the grid expands to no runs", path)
	}
	return g, nil
}

// sortByLine orders errors that start with path:line: by line, stably, so
// that a grid's problems read from top to bottom.
func sortByLine(path string, errs []error) {
	line := func(err error) int {
		rest, _ := strings.CutPrefix(err.Error(), path+":")
		n, _ := strconv.Atoi(rest[:max(strings.IndexByte(rest, ':'), 0)])
		return n
	}
	sort.SliceStable(errs, func(i, j int) bool { return line(errs[i]) < line(errs[j]) })
}

// requiredKeys have no default: every run must get them from [defaults] or
// its [[sweep]] block (DefaultRunSpec leaves them zero).
var requiredKeys = []string{"dataset", "model", "rank", "objective", "learning_rate", "batch_size", "epochs"}

// stand-ins for missing required keys while the rest of a block is checked;
// valid for any model and objective.
var requiredStandIns = map[string]any{
	"dataset": "dataset", "model": "cp2", "rank": int64(1), "objective": "pll",
	"learning_rate": 1.0, "batch_size": int64(1), "epochs": int64(1),
}

// checkRequired reports required keys that some block gets neither from
// itself nor from [defaults]: once, at [defaults], for a key no block has,
// else per block. A key a misspelt one was taken for ("did you mean"), or
// one whose value was refused, is not reported again. It returns, per block, stand-in assignments for its
// missing keys.
func (p *gridParser) checkRequired(defaults block, blocks []block) ([][]assignment, []error) {
	has := func(b block, key string) bool {
		for _, a := range b.assigns {
			if a.field.key == key {
				return true
			}
		}
		return false
	}
	guessed := func(key string, blocks ...block) bool {
		for _, b := range blocks {
			if p.guessed[b.name][key] {
				return true
			}
		}
		return false
	}
	var errs []error
	listed := false // the required keys are listed in the first message only
	requiredList := func() string {
		if listed {
			return ""
		}
		listed = true
		return "; required keys are " + strings.Join(requiredKeys, ", ")
	}
	standIns := make([][]assignment, len(blocks))
	for _, key := range requiredKeys {
		if has(defaults, key) {
			continue
		}
		var missing []int
		for i, b := range blocks {
			if !has(b, key) {
				missing = append(missing, i)
			}
		}
		for _, i := range missing {
			standIns[i] = append(standIns[i], assignment{field: specFieldByKey[key], values: []any{requiredStandIns[key]}})
		}
		// Blocks where a problem of the key was reported already (a
		// misspelling of it, its value refused) are not told it is missing.
		var unreported []int
		for _, i := range missing {
			if !guessed(key, blocks[i]) {
				unreported = append(unreported, i)
			}
		}
		switch {
		case len(unreported) == 0:
		case guessed(key, defaults):
		case len(unreported) == len(blocks):
			errs = append(errs, fmt.Errorf("%s:%d: missing required key %q: set it in [defaults] (or in every [[sweep]] block)%s",
				p.path, max(defaults.line, 1), key, requiredList()))
		default:
			for _, i := range unreported {
				errs = append(errs, fmt.Errorf("%s:%d: %s: missing required key %q: set it in this block or in [defaults]%s",
					p.path, max(blocks[i].line, 1), blocks[i].label, key, requiredList()))
			}
		}
	}
	return standIns, errs
}

// JoinCapped joins errors, keeping the first n, so that a grid (or a
// preflight) with a systematic mistake still gives a readable message.
func JoinCapped(errs []error, n int) error {
	if len(errs) > n {
		more := len(errs) - n
		errs = append(errs[:n:n], fmt.Errorf("... and %d more invalid runs", more))
	}
	return errors.Join(errs...)
}

var tomlLineRE = regexp.MustCompile(`^toml: line (\d+)(?: \(last key "([^"]*)"\))?: (.*)$`)

// tomlError rewrites a BurntSushi/toml error as path:line: message.
func tomlError(path string, ix *lineIndex, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) && pe.Position.Line > 0 {
		return fmt.Errorf("%s:%d: %s", path, pe.Position.Line, pe.Message)
	}
	if m := tomlLineRE.FindStringSubmatch(err.Error()); m != nil {
		msg := m[3]
		if m[2] != "" {
			msg = m[2] + ": " + msg
		}
		if m[2] == "sweep" || m[2] == "defaults" {
			msg += " (write [defaults] once and each sweep block as [[sweep]])"
		}
		return fmt.Errorf("%s:%s: %s", path, m[1], msg)
	}
	return fmt.Errorf("%s:1: %v", path, err)
}

// assignment is one key of one block: a single value, or a sweep axis.
type assignment struct {
	field  specField
	values []any // decoded TOML values; one unless axis
	axis   bool
}

type block struct {
	name    string // lineIndex block name
	label   string // for messages
	line    int
	assigns []assignment
}

type gridParser struct {
	path string
	ix   *lineIndex
	// guessed[block][key]: a problem of key in the block was reported
	// already: an unknown key taken for a misspelling of it, or its own
	// value of the wrong type. checkRequired does not call it missing.
	guessed map[string]map[string]bool
}

// reported notes that a problem of key in block name was reported.
func (p *gridParser) reported(name, key string) {
	if p.guessed == nil {
		p.guessed = map[string]map[string]bool{}
	}
	if p.guessed[name] == nil {
		p.guessed[name] = map[string]bool{}
	}
	p.guessed[name][key] = true
}

// causes splits a validator's error into the causes errors.Join joined.
func causes(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// keyLine places a validator's cause, whose message starts with the key it
// is about ("learning_rate -1: ..."): at the key's line in block b when b
// sets it, else at its line in [defaults] (where = "defaults"), else at
// b's line.
func (p *gridParser) keyLine(b, defaults *block, cause error) (line int, label, where string) {
	key, _, _ := strings.Cut(cause.Error(), " ")
	key = strings.TrimSuffix(key, ":")
	if l, ok := p.ix.keyLine(b.name, key); ok && b.name != "defaults" {
		return l, b.label, "block"
	}
	if l, ok := p.ix.keyLine("defaults", key); ok {
		return l, defaults.label, "defaults"
	}
	return max(b.line, 1), b.label, "block"
}

func (p *gridParser) errorf(b *block, key, format string, args ...any) error {
	line := p.ix.line(b.name, key)
	if line == 0 {
		line = max(b.line, 1)
	}
	return fmt.Errorf("%s:%d: %s: %s", p.path, line, b.label, fmt.Sprintf(format, args...))
}

// parseBlock parses one block, reporting every bad key of it; the block
// holds the keys that were good.
func (p *gridParser) parseBlock(name, label string, m map[string]any) (block, []error) {
	b := block{name: name, label: label, line: p.ix.line(name, "")}
	var errs []error
	// Report problems in file order, so the first error is the first line.
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return p.ix.line(name, keys[i]) < p.ix.line(name, keys[j]) })
	for _, k := range keys {
		v := m[k]
		if k == "seeds" {
			if _, both := m["seed"]; both {
				errs = append(errs, p.errorf(&b, k, "seeds and seed both set; seeds = N means seed = [0, ..., N-1]"))
				continue
			}
			n, ok := v.(int64)
			if !ok || n < 1 || n > maxRuns {
				errs = append(errs, p.errorf(&b, k, "seeds: want a positive integer N (meaning seed = [0, ..., N-1]), got %s", describeTOML(v)))
				continue
			}
			values := make([]any, n)
			for i := range values {
				values[i] = int64(i)
			}
			b.assigns = append(b.assigns, assignment{field: specFieldByKey["seed"], values: values, axis: true})
			continue
		}
		f, ok := specFieldByKey[k]
		if !ok {
			if guess := closest(k, childKeys("")); guess != "" {
				p.reported(name, guess)
			}
			errs = append(errs, p.errorf(&b, k, "%v", unknownKeyError("", k)))
			continue
		}
		if err := p.assign(&b, f, v); err != nil {
			p.reported(name, k) // one error per cause: not "missing" as well
			errs = append(errs, err)
		}
	}
	return b, errs
}

// assign records key f = v in block b, deciding whether v is a value or an
// axis from the field's type: an array is an axis for a scalar key, an array
// of arrays for a list key (eval.hits), an array of tables for a table key.
// Every value is type-checked here so that errors carry the key's line.
func (p *gridParser) assign(b *block, f specField, v any) error {
	check := func(v any) error {
		scratch := DefaultRunSpec()
		return setField(&scratch, f, v)
	}
	fail := func(err error) error { return p.errorf(b, f.key, "%v", err) }
	switch {
	case f.isTable():
		if m, ok := v.(map[string]any); ok {
			// A table's members are keys in their own right, each possibly an axis.
			var errs []error
			for _, k := range sortedKeys(m) {
				sub, ok := specFieldByKey[f.key+"."+k]
				if !ok {
					errs = append(errs, p.errorf(b, f.key+"."+k, "%v", unknownKeyError(f.key+".", k)))
					continue
				}
				if err := p.assign(b, sub, m[k]); err != nil {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		}
		elems, ok := asArray(v)
		if !ok {
			return fail(fmt.Errorf("%s: want a table or an array of tables (a sweep axis), got %s", f.key, describeTOML(v)))
		}
		if len(elems) == 0 {
			return fail(fmt.Errorf("%s: empty sweep axis", f.key))
		}
		for i, e := range elems {
			m, ok := e.(map[string]any)
			if !ok {
				return fail(fmt.Errorf("%s: element %d of the axis: want a table, got %s", f.key, i, describeTOML(e)))
			}
			if err := checkNoNestedAxis(f.key, m); err != nil {
				return fail(err)
			}
			if err := check(m); err != nil {
				return fail(err)
			}
		}
		b.assigns = append(b.assigns, assignment{field: f, values: elems, axis: true})
	case f.isList():
		arr, ok := v.([]any)
		if !ok {
			return fail(fmt.Errorf("%s: want an array, got %s", f.key, describeTOML(v)))
		}
		nested := 0
		for _, e := range arr {
			if _, ok := e.([]any); ok {
				nested++
			}
		}
		switch {
		case nested == 0:
			if err := check(arr); err != nil {
				return fail(err)
			}
			b.assigns = append(b.assigns, assignment{field: f, values: []any{arr}})
		case nested == len(arr):
			for _, e := range arr {
				if err := check(e); err != nil {
					return fail(err)
				}
			}
			b.assigns = append(b.assigns, assignment{field: f, values: arr, axis: true})
		default:
			return fail(fmt.Errorf("%s: mixes arrays and values; write a list ([1, 3]) or a sweep axis of lists ([[1], [1, 3]])", f.key))
		}
	default:
		if arr, ok := asArray(v); ok {
			if len(arr) == 0 {
				return fail(fmt.Errorf("%s: empty sweep axis", f.key))
			}
			for i, e := range arr {
				if err := check(e); err != nil {
					return fail(fmt.Errorf("element %d of the axis: %w", i, err))
				}
			}
			b.assigns = append(b.assigns, assignment{field: f, values: arr, axis: true})
			return nil
		}
		if err := check(v); err != nil {
			return fail(err)
		}
		b.assigns = append(b.assigns, assignment{field: f, values: []any{v}})
	}
	return nil
}

// asArray accepts both forms the TOML library returns for arrays: []any for
// inline arrays and []map[string]any for [[arrays.of.tables]].
func asArray(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []map[string]any:
		out := make([]any, len(x))
		for i, m := range x {
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

// checkNoNestedAxis rejects an axis inside an element of a table axis: the
// product would be ambiguous, and it is clearer written as two keys.
func checkNoNestedAxis(prefix string, m map[string]any) error {
	for _, k := range sortedKeys(m) {
		f, ok := specFieldByKey[prefix+"."+k]
		if !ok || f.isList() {
			continue
		}
		if _, isArr := asArray(m[k]); isArr {
			return fmt.Errorf("%s.%s: an array inside an array of tables would be a nested sweep axis, which is not supported; sweep %s.%s as its own key", prefix, k, prefix, k)
		}
	}
	return nil
}

// maxRuns bounds a grid's expansion: a typo such as seeds = 50000 must
// give an error, not exhaust memory.
const maxRuns = 100_000

// blockSize is len(expandBlock(defaults, b)), computed without expanding.
func blockSize(defaults, b block) int {
	n := 1
	for _, a := range mergeAssignments(defaults, b) {
		if n *= len(a.values); n > maxRuns {
			return maxRuns + 1
		}
	}
	return n
}

// expandBlock returns the Cartesian product of defaults and b. A key set in
// b replaces that key from defaults. Tables written as tables or dotted keys
// are sets of member keys, so they merge member by member; an array of
// tables (a table axis) in b replaces the whole table, dropping members set
// in defaults; a member set in b (pll_weights.relation) applies on top of
// any table axis from defaults.
func expandBlock(defaults, b block) []RunSpec {
	assigns := mergeAssignments(defaults, b)
	choice := make([]int, len(assigns))
	var specs []RunSpec
	for {
		spec := DefaultRunSpec()
		for i, a := range assigns {
			// Values were type-checked by assign, so this cannot fail.
			_ = setField(&spec, a.field, a.values[choice[i]])
		}
		specs = append(specs, spec.Clone())
		// Odometer: the last axis varies fastest.
		i := len(assigns) - 1
		for ; i >= 0; i-- {
			if !assigns[i].axis {
				continue
			}
			choice[i]++
			if choice[i] < len(assigns[i].values) {
				break
			}
			choice[i] = 0
		}
		if i < 0 {
			return specs
		}
	}
}

// mergeAssignments lists the assignments of block b over defaults, in
// RunSpec field order, which makes the expansion independent of how the
// file is laid out and applies a table before its members.
func mergeAssignments(defaults, b block) []assignment {
	var assigns []assignment
	if b.name != defaults.name {
		for _, d := range defaults.assigns {
			overridden := false
			for _, a := range b.assigns {
				if d.field.key == a.field.key || strings.HasPrefix(d.field.key, a.field.key+".") {
					overridden = true
					break
				}
			}
			if !overridden {
				assigns = append(assigns, d)
			}
		}
	}
	assigns = append(assigns, b.assigns...)
	sort.SliceStable(assigns, func(i, j int) bool { return assigns[i].field.order < assigns[j].field.order })
	return assigns
}

// DescribeRun is the one-line summary of a run's key hyperparameters used
// by -dry-run.
func DescribeRun(s RunSpec) string {
	parts := []string{s.Dataset, s.Model, s.Objective, "d=" + strconv.Itoa(s.Rank), "b=" + strconv.Itoa(s.BatchSize),
		"lr=" + formatFloat(s.LearningRate), "seed=" + strconv.Itoa(s.Seed)}
	if s.Constraints != "none" {
		parts = append(parts, "constraints="+s.Constraints)
	}
	if s.Optimizer != "" && s.Optimizer != "adam" {
		parts = append(parts, "optimizer="+s.Optimizer)
	}
	if w := s.PLLWeights; s.Objective == "pll" && (w.Subject != 1 || w.Relation != 1 || w.Object != 1) {
		parts = append(parts, "ω_s,r,o="+formatFloat(w.Subject)+","+formatFloat(w.Relation)+","+formatFloat(w.Object))
	}
	if s.N3 != 0 {
		parts = append(parts, "n3="+formatFloat(s.N3))
	}
	if s.F2 != 0 {
		parts = append(parts, "f2="+formatFloat(s.F2))
	}
	return strings.Join(parts, " ")
}
