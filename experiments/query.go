package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gekc/internal/editdist"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/query"
	"gekc/sweep"
)

const queryUsage = `usage: go run ./experiments query -run RUN [-s NAME] [-r NAME] [-o NAME] [flags]

Asks a finished run's model about its triples, by entity and relation names.
RUN is a run directory, its checkpoint.npz, or a run ID (or unique prefix)
under -out's runs/ (default: every results/*/runs/ of the repository).

  two of -s -r -o     the k most probable completions of the third slot with
                      their probabilities: p(o | s, r), p(s | r, o), p(r | s, o)
                      (a GeKC's exact conditionals; an energy-based model's
                      softmax of its scores, labelled so); -filtered leaves out
                      the completions that are known triples (train, valid or
                      test); known ones are marked either way
  all three           log p(s, r, o) (GeKCs) and the three conditionals
  -triples FILE       the same for each line "subject<TAB>relation<TAB>object"
  -target SLOT with at most one of -s -r -o
                      the marginal of subject, relation or object given that
                      slot (or nothing): p(o | s), p(r), p(s | r), ... (GeKCs)
  -sample N with -s and/or -r (or neither)
                      N exact samples (s, r, o) conditioned on what is given
                      (GeKCs), under the run's domain constraint if it had one

flags:
`

// queryOptions are the query subcommand's flags.
type queryOptions struct {
	run, out, data       string
	s, r, o, target      string
	triples              string
	k, sample            int
	seed                 uint64
	filtered             bool
	format               string
	batch                int
	stdout, stderr       io.Writer
	getenv               func(string) string
	wd                   string
	subject, rel, object int // ids, −1 when not given
}

// runQuery is the "query" subcommand: `go run ./experiments query ...`.
func runQuery(_ context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("experiments query", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	o := queryOptions{stdout: env.stdout, stderr: env.stderr, getenv: env.getenv, wd: env.dir}
	fs.StringVar(&o.run, "run", "", "finished `run`: directory, checkpoint.npz, or ID (required)")
	fs.StringVar(&o.out, "out", "", "results `directory` whose runs/ holds the run ID (default: every results/*/ of the repository)")
	fs.StringVar(&o.data, "data", "", "data root (default $GEKC_DATA, else <repository>/data)")
	fs.StringVar(&o.s, "s", "", "subject `name`")
	fs.StringVar(&o.r, "r", "", "relation `name`")
	fs.StringVar(&o.o, "o", "", "object `name`")
	fs.StringVar(&o.target, "target", "", "marginal of `slot` subject, relation or object (with at most one of -s -r -o)")
	fs.StringVar(&o.triples, "triples", "", "`file` of subject<TAB>relation<TAB>object lines to score")
	fs.IntVar(&o.k, "k", 10, "completions listed (0: all)")
	fs.IntVar(&o.sample, "sample", 0, "draw `N` samples conditioned on -s and/or -r")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of -sample")
	fs.BoolVar(&o.filtered, "filtered", false, "leave known triples (train, valid, test) out of completions")
	fs.StringVar(&o.format, "format", "text", "output: text, tsv or json")
	fs.IntVar(&o.batch, "batch", 256, "evaluation batch size")
	fs.Usage = func() {
		fmt.Fprint(env.stderr, queryUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "experiments query: unexpected argument %q (see -h)\n", fs.Arg(0))
		return exitUsage
	}
	if err := o.execute(); err != nil {
		fmt.Fprintf(env.stderr, "experiments query: %v\n", err)
		return exitUsage
	}
	return exitOK
}

func (o *queryOptions) execute() error {
	switch {
	case o.run == "":
		return errors.New("-run is required: a run directory, its checkpoint.npz, or a run ID")
	case o.format != "text" && o.format != "tsv" && o.format != "json":
		return fmt.Errorf("-format %q: want text, tsv or json", o.format)
	case o.k < 0:
		return fmt.Errorf("-k %d: want 0 (all) or more", o.k)
	case o.sample < 0:
		return fmt.Errorf("-sample %d: want a positive count", o.sample)
	case o.batch <= 0:
		return fmt.Errorf("-batch %d: want a positive size", o.batch)
	}
	wd := o.wd
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return err
		}
	}
	repo := findRepoRoot(wd)
	dir, err := findQueryRun(o.run, o.out, repo, wd)
	if err != nil {
		return err
	}
	dataRoot := resolveDataRoot(o.data, o.getenv("GEKC_DATA"), repo)
	if !filepath.IsAbs(dataRoot) {
		dataRoot = filepath.Join(wd, dataRoot)
	}
	fr, err := sweep.LoadFinished(dir, dataRoot)
	if err != nil {
		return err
	}
	dom, err := sweep.Constraint(fr.Spec, fr.Data)
	if err != nil {
		return err
	}
	q, err := query.New(fr.Model, dom, o.batch)
	if err != nil {
		return err
	}
	res, err := o.answer(q, fr.Data)
	if err != nil {
		return err
	}
	res.Run, res.Model = fr.ID, fr.Spec.Model
	res.Constrained = dom != nil
	return res.write(o.stdout, o.format)
}

// findQueryRun resolves -run: a directory, a checkpoint file, or an ID
// under out/runs (or under any results/*/runs of the repository).
func findQueryRun(ref, out, repo, wd string) (string, error) {
	if st, err := os.Stat(ref); err == nil {
		if st.IsDir() {
			return ref, nil
		}
		return filepath.Dir(ref), nil
	}
	if out != "" {
		if !filepath.IsAbs(out) {
			out = filepath.Join(wd, out)
		}
		return sweep.ResolveRun(out, ref)
	}
	base := repo
	if base == "" {
		base = wd
	}
	outs, _ := filepath.Glob(filepath.Join(base, "results", "*"))
	var found []string
	for _, d := range outs {
		if dir, err := sweep.ResolveRun(d, ref); err == nil {
			found = append(found, dir)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("run %q: no such directory or file, and no run of that ID under %s/*/runs (name the results directory with -out)", ref, filepath.Join(base, "results"))
	}
	return "", fmt.Errorf("run %q: found in several results directories (%s); name one with -out", ref, strings.Join(found, ", "))
}

// lookupName returns the id of a name in vocab, or an error that names it
// and suggests up to three close names.
func lookupName(v *kg.Vocab, kind, name string) (int, error) {
	if id, ok := v.Index(name); ok {
		return int(id), nil
	}
	msg := fmt.Sprintf("unknown %s %q", kind, name)
	if near := closeNames(v.Names(), name, 3); len(near) > 0 {
		quoted := make([]string, len(near))
		for i, n := range near {
			quoted[i] = strconv.Quote(n)
		}
		msg += "; did you mean " + strings.Join(quoted, ", ") + "?"
	}
	return 0, errors.New(msg)
}

// closeNames returns up to n names near name: those it is a case-insensitive
// prefix or substring of first, then by edit distance (at most a third of
// the name's length, and at least 2).
func closeNames(names []string, name string, n int) []string {
	type cand struct {
		name  string
		class int
		dist  int
	}
	lower := strings.ToLower(name)
	limit := max(2, len([]rune(name))/3)
	var cs []cand
	for _, c := range names {
		lc := strings.ToLower(c)
		switch {
		case lc == lower:
			cs = append(cs, cand{c, 0, 0})
		case strings.HasPrefix(lc, lower):
			cs = append(cs, cand{c, 1, len(c) - len(name)})
		case strings.Contains(lc, lower):
			cs = append(cs, cand{c, 2, len(c) - len(name)})
		default:
			if d := editdist.Distance(lower, lc); d <= limit {
				cs = append(cs, cand{c, 3, d})
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].class != cs[j].class {
			return cs[i].class < cs[j].class
		}
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

func (o *queryOptions) answer(q *query.Querier, ds *kg.Dataset) (*queryResult, error) {
	o.subject, o.rel, o.object = -1, -1, -1
	var err error
	if o.s != "" {
		if o.subject, err = lookupName(ds.Entities, "entity", o.s); err != nil {
			return nil, err
		}
	}
	if o.r != "" {
		if o.rel, err = lookupName(ds.Relations, "relation", o.r); err != nil {
			return nil, err
		}
	}
	if o.o != "" {
		if o.object, err = lookupName(ds.Entities, "entity", o.o); err != nil {
			return nil, err
		}
	}
	given := [3]int{o.subject, o.rel, o.object}
	n := 0
	for _, x := range given {
		if x >= 0 {
			n++
		}
	}
	names := func(t [3]int) (string, string, string) {
		s, r, ob := "?", "?", "?"
		if t[0] >= 0 {
			s = ds.Entities.Name(int32(t[0]))
		}
		if t[1] >= 0 {
			r = ds.Relations.Name(int32(t[1]))
		}
		if t[2] >= 0 {
			ob = ds.Entities.Name(int32(t[2]))
		}
		return s, r, ob
	}
	describe := func(t [3]int) string {
		s, r, ob := names(t)
		return fmt.Sprintf("(%s, %s, %s)", s, r, ob)
	}
	if o.filtered && (o.triples != "" || o.target != "" || o.sample > 0 || n != 2) {
		return nil, errors.New("-filtered applies to completions (two of -s -r -o)")
	}
	switch {
	case o.triples != "" || (n == 3 && o.target == "" && o.sample == 0):
		if o.target != "" || o.sample > 0 {
			return nil, errors.New("-triples and a full triple are scored; -target and -sample do not apply")
		}
		var ts [][3]int
		if o.triples != "" {
			if n > 0 {
				return nil, errors.New("-triples and -s/-r/-o: give one or the other")
			}
			if ts, err = readQueryTriples(o.triples, ds); err != nil {
				return nil, err
			}
		} else {
			ts = [][3]int{given}
		}
		return o.score(q, ds, ts, names)
	case o.sample > 0:
		if o.object >= 0 || o.target != "" {
			return nil, errors.New("-sample conditions on -s and/or -r only")
		}
		ts, err := q.SampleGiven(given, o.sample, rand.New(rand.NewPCG(o.seed, 0x9e1)))
		if err != nil {
			return nil, err
		}
		res := &queryResult{Query: describe(given), Kind: kindSample}
		for _, t := range ts {
			s, r, ob := names(t)
			res.Rows = append(res.Rows, queryRow{Subject: s, Relation: r, Object: ob})
		}
		return res, nil
	case n == 2:
		var v models.Var
		for _, x := range models.Vars {
			if given[x] < 0 {
				v = x
			}
		}
		if o.target != "" {
			if t, err := parseTarget(o.target); err != nil {
				return nil, err
			} else if t != v {
				return nil, fmt.Errorf("-target %s: the query's free slot is the %v", o.target, v)
			}
		}
		lp, err := q.Conditional(given, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", describe(given), err)
		}
		kind := kindConditional
		if q.Model().Semantics == models.Energy {
			kind = kindSoftmax
		}
		filter := kg.NewFilter(ds.Train, ds.Valid, ds.Test)
		res := &queryResult{Query: describe(given), Kind: kind, Filtered: o.filtered}
		for _, i := range metrics.TopK(lp, 0, nil) {
			t := given
			t[v] = i
			known := filter.Contains(kg.Triple{S: int32(t[0]), R: int32(t[1]), O: int32(t[2])})
			if known && o.filtered {
				continue
			}
			s, r, ob := names(t)
			res.Rows = append(res.Rows, queryRow{Subject: s, Relation: r, Object: ob, Prob: fptr(math.Exp(lp[i])), LogProb: fptr(lp[i]), Known: &known})
			if o.k > 0 && len(res.Rows) == o.k {
				break
			}
		}
		for i := range res.Rows {
			res.Rows[i].Rank = i + 1
		}
		return res, nil
	}
	if o.target == "" {
		return nil, fmt.Errorf("%d of -s -r -o given: give two for completions, three (or -triples) to score, or -target for a marginal, or -sample", n)
	}
	target, err := parseTarget(o.target)
	if err != nil {
		return nil, err
	}
	lp, err := q.Marginal(given, target)
	if err != nil {
		return nil, err
	}
	res := &queryResult{Kind: kindMarginal, Query: fmt.Sprintf("p(%v)", target)}
	for _, v := range models.Vars {
		if given[v] >= 0 {
			s, r, ob := names(given)
			res.Query = fmt.Sprintf("p(%v | %v = %s)", target, v, [3]string{s, r, ob}[v])
		}
	}
	for _, i := range metrics.TopK(lp, o.k, nil) {
		row := queryRow{Prob: fptr(math.Exp(lp[i])), LogProb: fptr(lp[i])}
		switch target {
		case models.Subject:
			row.Subject = ds.Entities.Name(int32(i))
		case models.Relation:
			row.Relation = ds.Relations.Name(int32(i))
		default:
			row.Object = ds.Entities.Name(int32(i))
		}
		res.Rows = append(res.Rows, row)
	}
	for i := range res.Rows {
		res.Rows[i].Rank = i + 1
	}
	return res, nil
}

// score answers log p(s, r, o) (GeKCs) and the three conditionals.
func (o *queryOptions) score(q *query.Querier, ds *kg.Dataset, ts [][3]int, names func([3]int) (string, string, string)) (*queryResult, error) {
	res := &queryResult{Kind: kindJoint, Query: "log p(s, r, o) and log p(s | r, o), log p(r | s, o), log p(o | s, r)"}
	var joint []float64
	if q.Model().Semantics != models.Energy {
		var err error
		if joint, err = q.LogJoint(ts); err != nil {
			return nil, err
		}
	} else {
		res.Query = "softmax of the scores over each slot (energy-based: no joint probability)"
		res.Kind = kindSoftmax
	}
	filter := kg.NewFilter(ds.Train, ds.Valid, ds.Test)
	for i, t := range ts {
		s, r, ob := names(t)
		known := filter.Contains(kg.Triple{S: int32(t[0]), R: int32(t[1]), O: int32(t[2])})
		row := queryRow{Subject: s, Relation: r, Object: ob, Known: &known}
		if joint != nil {
			row.LogProb, row.Prob = fptr(joint[i]), fptr(math.Exp(joint[i]))
		}
		lc, err := q.SlotConditionals(t)
		if err != nil {
			return nil, err
		}
		row.LogPSubject, row.LogPRelation, row.LogPObject = fptr(lc[0]), fptr(lc[1]), fptr(lc[2])
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// readQueryTriples reads subject<TAB>relation<TAB>object lines of names.
func readQueryTriples(path string, ds *kg.Dataset) ([][3]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][3]int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		p := strings.Split(text, "\t")
		if len(p) != 3 {
			return nil, fmt.Errorf("%s:%d: want subject<TAB>relation<TAB>object, got %d fields", path, line, len(p))
		}
		var t [3]int
		for i, kind := range []string{"entity", "relation", "entity"} {
			v := ds.Entities
			if i == 1 {
				v = ds.Relations
			}
			if t[i], err = lookupName(v, kind, p[i]); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no triples", path)
	}
	return out, nil
}

// parseTarget reads -target: subject, relation or object, or s, r, o.
func parseTarget(name string) (models.Var, error) {
	switch name {
	case "subject", "s":
		return models.Subject, nil
	case "relation", "r":
		return models.Relation, nil
	case "object", "o":
		return models.Object, nil
	}
	return 0, fmt.Errorf("-target %q: want subject, relation or object", name)
}
