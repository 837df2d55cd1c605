package kg

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
)

// Negatives are the candidates that OGB supplies for ranking each valid and
// test triple: row i of ValidHead holds the entities to rank valid triple
// i's subject against, ValidTail those for its object, and so on. Ids are
// global entity ids of the Dataset, and every candidate has the type of the
// entity it replaces.
type Negatives struct {
	ValidHead, ValidTail, TestHead, TestTail [][]int32
}

// The OGB layout of ogbl-biokg, as OGB's LinkPropPredDataset reads it
// (snap-stanford/ogb: ogb/linkproppred/dataset.py, ogb/io/read_graph_raw.py,
// examples/linkproppred/biokg/run.py and dataloader.py):
//
//	raw/num-node-dict.csv.gz         CSV: a header of node types, then one
//	                                 row of node counts per type
//	split/random/{train,valid,test}.pt
//	                                 torch.save'd dicts: head, relation, tail
//	                                 (int64 arrays, n), head_type, tail_type
//	                                 (str per edge), and for valid and test
//	                                 head_neg, tail_neg (int64 arrays, n x 500)
//	mapping/relidx2relname.csv.gz    CSV "rel idx,rel name" (optional here)
//	mapping/<type>_entidx2name.csv.gz
//	                                 CSV "ent idx,ent name" (optional here)
//
// Head, tail and negatives are indices local to their node type. OGB's
// example code numbers entities globally by giving each type a block, in
// the sorted order of type names, each block in local order; loadOGB does
// the same, so ids and negatives match OGB's own evaluation.
//
// The real files: 93,773 entities of 5 types, 51 relations, 4,762,678
// train, 162,886 valid and 162,870 test triples; valid.pt and test.pt hold
// 500 head and 500 tail negatives per triple, about 1.3 GB each as int64.
// OGB stores the arrays as numpy arrays; torch tensors are read as well.
const ogbSplitDir = "split/random"

func isOGBDir(dir string) (bool, error) {
	return isFile(filepath.Join(dir, filepath.FromSlash(ogbSplitDir), "train.pt"))
}

// ogbSplit is one split file, with negatives already as global ids.
type ogbSplit struct {
	file               string
	head, rel, tail    []int64 // head and tail local to their type
	headType, tailType []int32 // type ids
	headNeg, tailNeg   [][]int32
}

// ogbNodes numbers nodes globally: type t owns ids offsets[t] up to
// offsets[t+1], in local order.
type ogbNodes struct {
	types   *Vocab
	counts  []int
	offsets []int32
}

// global returns the id of node local of type t; edge and role describe
// where it comes from, for the error.
func (g *ogbNodes) global(file string, edge int, role string, t int32, local int64) (int32, error) {
	if local < 0 || local >= int64(g.counts[t]) {
		return 0, fmt.Errorf("%s: edge %d (0-based): %s %d out of range for type %q of %d nodes",
			file, edge, role, local, g.types.Name(t), g.counts[t])
	}
	return g.offsets[t] + int32(local), nil
}

func loadOGB(dir string) (*Dataset, error) {
	countsPath := filepath.Join(dir, "raw", "num-node-dict.csv.gz")
	types, counts, err := readNumNodeDict(countsPath)
	if err != nil {
		return nil, err
	}
	nodes := &ogbNodes{types: types, counts: counts, offsets: make([]int32, len(counts)+1)}
	for t, c := range counts {
		if int64(nodes.offsets[t])+int64(c) > math.MaxInt32 {
			return nil, fmt.Errorf("%s: more than %d nodes", countsPath, math.MaxInt32)
		}
		nodes.offsets[t+1] = nodes.offsets[t] + int32(c)
	}

	var splits [3]*ogbSplit
	for i, name := range [3]string{"train", "valid", "test"} {
		path := filepath.Join(dir, filepath.FromSlash(ogbSplitDir), name+".pt")
		if splits[i], err = readOGBSplit(path, nodes, i > 0); err != nil {
			return nil, err
		}
	}

	relNames, err := readOGBRelationNames(filepath.Join(dir, "mapping", "relidx2relname.csv.gz"), splits)
	if err != nil {
		return nil, err
	}
	rels, err := NewVocab(relNames)
	if err != nil {
		return nil, err
	}
	var entNames []string
	for t := range counts {
		names, err := readOGBEntityNames(dir, types.Name(int32(t)), counts[t])
		if err != nil {
			return nil, err
		}
		entNames = append(entNames, names...)
	}
	// Names are distinct within a type, and the type prefix keeps them
	// apart across types, so this fails only for type names with colons.
	ents, err := NewVocab(entNames)
	if err != nil {
		return nil, err
	}

	d := &Dataset{Name: datasetName(dir), Dir: dir, Entities: ents, Relations: rels}
	schema := &Schema{
		Types:       types,
		EntityType:  make([]int32, ents.Len()),
		SubjectType: filled(rels.Len(), -1),
		ObjectType:  filled(rels.Len(), -1),
	}
	for t := range counts {
		for e := nodes.offsets[t]; e < nodes.offsets[t+1]; e++ {
			schema.EntityType[e] = int32(t)
		}
	}
	g := ogbGlobalizer{ogbNodes: nodes, rels: rels, schema: schema, firstEdge: make([]edgeRef, rels.Len())}
	for i, sp := range splits {
		ts, err := g.triples(sp)
		if err != nil {
			return nil, err
		}
		*d.split(i) = ts
	}
	for r, t := range schema.SubjectType {
		if t < 0 {
			return nil, fmt.Errorf("kg: %s: relation %q has no edge in any split, so its types are unknown", dir, rels.Name(int32(r)))
		}
	}
	d.Schema = schema
	d.Negatives = &Negatives{
		ValidHead: splits[1].headNeg, ValidTail: splits[1].tailNeg,
		TestHead: splits[2].headNeg, TestTail: splits[2].tailNeg,
	}
	return d, nil
}

// readNumNodeDict returns the node types in sorted order and their counts.
func readNumNodeDict(path string) (*Vocab, []int, error) {
	var header, row []string
	err := readCSV(path, func(line int, rec []string) error {
		switch {
		case header == nil:
			header = slices.Clone(rec)
		case row == nil:
			row = slices.Clone(rec)
		default:
			return lineErrorf(path, line, "more than one row of counts; kg reads single-graph data sets only")
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if row == nil {
		return nil, nil, fmt.Errorf("kg: %s: no row of node counts", path)
	}
	types, err := SortedVocab(header)
	if err != nil || types.Len() != len(header) {
		return nil, nil, lineErrorf(path, 1, "node types must be distinct and non-empty: %q", header)
	}
	counts := make([]int, types.Len())
	for i, f := range row {
		c, err := strconv.Atoi(f)
		if err != nil || c < 0 {
			return nil, nil, lineErrorf(path, 2, "count %q of type %q is not a non-negative integer", f, header[i])
		}
		t, _ := types.Index(header[i])
		counts[t] = c
	}
	return types, counts, nil
}

// readCSV calls fn with each record of the gzipped CSV file at path and its
// 1-based line. All records must have as many fields as the first.
func readCSV(path string, fn func(line int, rec []string) error) error {
	return readInput(path, func(r io.Reader) error {
		cr := csv.NewReader(r)
		cr.ReuseRecord = true
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				return nil
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return &LineError{File: path, Line: pe.Line, Err: pe.Err}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			line, _ := cr.FieldPos(0)
			if err := fn(line, rec); err != nil {
				return err
			}
		}
	})
}

// readOGBSplit reads one split file.
func readOGBSplit(path string, nodes *ogbNodes, withNegatives bool) (*ogbSplit, error) {
	m, err := readPT(path)
	if err != nil {
		return nil, err
	}
	return ogbSplitFromDict(m, path, nodes, withNegatives)
}

// ogbSplitFromDict checks and converts the dict of a split file. It
// deletes each entry once converted, so that the garbage collector can
// take the pickled copy early.
func ogbSplitFromDict(m map[string]any, path string, nodes *ogbNodes, withNegatives bool) (sp *ogbSplit, err error) {
	types := nodes.types
	sp = &ogbSplit{file: path}
	n := -1
	column := func(key string) ([]int64, error) {
		v, ok := m[key]
		if !ok {
			return nil, fmt.Errorf("%s: no %q", path, key)
		}
		delete(m, key)
		xs, shape, err := int64s(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, key, err)
		}
		if len(shape) != 1 || (n >= 0 && shape[0] != n) {
			return nil, fmt.Errorf("%s: %q has shape %v, want (%d,)", path, key, shape, max(n, 0))
		}
		n = shape[0]
		return xs, nil
	}
	if sp.head, err = column("head"); err != nil {
		return nil, err
	}
	if sp.rel, err = column("relation"); err != nil {
		return nil, err
	}
	if sp.tail, err = column("tail"); err != nil {
		return nil, err
	}
	typeColumn := func(key string) ([]int32, error) {
		v, ok := m[key]
		if !ok {
			return nil, fmt.Errorf("%s: no %q; kg reads the heterogeneous ogbl-biokg layout", path, key)
		}
		delete(m, key)
		names, err := strs(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, key, err)
		}
		if len(names) != n {
			return nil, fmt.Errorf("%s: %q has %d entries for %d edges", path, key, len(names), n)
		}
		ids := make([]int32, n)
		for i, name := range names {
			t, ok := types.Index(name)
			if !ok {
				return nil, fmt.Errorf("%s: %s of edge %d (0-based) is %q, not a type of num-node-dict.csv.gz", path, key, i, name)
			}
			ids[i] = t
		}
		return ids, nil
	}
	if sp.headType, err = typeColumn("head_type"); err != nil {
		return nil, err
	}
	if sp.tailType, err = typeColumn("tail_type"); err != nil {
		return nil, err
	}
	if !withNegatives {
		return sp, nil
	}
	// Negatives are local to the type of the side they replace.
	negatives := func(key, role string, typ []int32) ([][]int32, error) {
		v, ok := m[key]
		if !ok {
			return nil, fmt.Errorf("%s: no %q", path, key)
		}
		delete(m, key)
		a, err := asIntArray(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, key, err)
		}
		shape := a.shape()
		if len(shape) != 2 || shape[0] != n {
			return nil, fmt.Errorf("%s: %q has shape %v, want (%d, k)", path, key, shape, n)
		}
		k := shape[1]
		flat := make([]int32, n*k)
		err = a.each(func(i int, x int64) error {
			e, err := nodes.global(path, i/k, role, typ[i/k], x)
			flat[i] = e
			return err
		})
		if err != nil {
			return nil, err
		}
		rows := make([][]int32, n)
		for i := range rows {
			rows[i] = flat[i*k : (i+1)*k : (i+1)*k]
		}
		return rows, nil
	}
	if sp.headNeg, err = negatives("head_neg", "head_neg", sp.headType); err != nil {
		return nil, err
	}
	if sp.tailNeg, err = negatives("tail_neg", "tail_neg", sp.tailType); err != nil {
		return nil, err
	}
	if len(sp.headNeg) > 0 && len(sp.headNeg[0]) != len(sp.tailNeg[0]) {
		return nil, fmt.Errorf("%s: %d head negatives but %d tail negatives per edge", path, len(sp.headNeg[0]), len(sp.tailNeg[0]))
	}
	return sp, nil
}

// readOGBRelationNames returns the relation names by id, from the mapping
// file if there is one, else the ids as decimal numbers.
func readOGBRelationNames(path string, splits [3]*ogbSplit) ([]string, error) {
	ok, err := isFile(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		n := int64(0)
		for _, sp := range splits {
			for _, r := range sp.rel {
				n = max(n, r+1)
			}
		}
		if n > math.MaxInt32 {
			return nil, fmt.Errorf("kg: %s: relation id %d out of range", filepath.Dir(filepath.Dir(path)), n-1)
		}
		names := make([]string, n)
		for i := range names {
			names[i] = strconv.Itoa(i)
		}
		return names, nil
	}
	return readIndexedNames(path, "rel idx", "rel name", -1)
}

// readOGBEntityNames returns the names of the count entities of a type:
// "type:name" from the mapping file if there is one, else "type:index".
func readOGBEntityNames(dir, typ string, count int) ([]string, error) {
	path := filepath.Join(dir, "mapping", typ+"_entidx2name.csv.gz")
	ok, err := isFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	if ok {
		if names, err = readIndexedNames(path, "ent idx", "ent name", count); err != nil {
			return nil, err
		}
	} else {
		names = make([]string, count)
		for i := range names {
			names[i] = strconv.Itoa(i)
		}
	}
	for i, name := range names {
		names[i] = typ + ":" + name
	}
	return names, nil
}

// readIndexedNames reads a mapping file: a header idxCol,nameCol, then
// one row per index 0..n-1 in any order, each with a distinct name. want
// is n, or -1 to accept any n.
func readIndexedNames(path, idxCol, nameCol string, want int) ([]string, error) {
	type row struct {
		idx, line int
		name      string
	}
	var rows []row
	header := true
	err := readCSV(path, func(line int, rec []string) error {
		if len(rec) != 2 {
			return lineErrorf(path, line, "expected 2 fields, got %d", len(rec))
		}
		if header {
			header = false
			if rec[0] != idxCol || rec[1] != nameCol {
				return lineErrorf(path, line, "header %q, want %q", rec, []string{idxCol, nameCol})
			}
			return nil
		}
		i, err := strconv.Atoi(rec[0])
		if err != nil || i < 0 {
			return lineErrorf(path, line, "index %q is not a non-negative integer", rec[0])
		}
		if rec[1] == "" {
			return lineErrorf(path, line, "empty name")
		}
		rows = append(rows, row{i, line, rec[1]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if want >= 0 && len(rows) != want {
		return nil, fmt.Errorf("%s: %d names for %d nodes", path, len(rows), want)
	}
	names := make([]string, len(rows))
	lineOf := make([]int, len(rows))
	byName := make(map[string]int, len(rows))
	for _, r := range rows {
		switch {
		case r.idx >= len(rows):
			return nil, lineErrorf(path, r.line, "index %d out of range for %d rows", r.idx, len(rows))
		case lineOf[r.idx] != 0:
			return nil, lineErrorf(path, r.line, "index %d already listed on line %d", r.idx, lineOf[r.idx])
		case byName[r.name] != 0:
			return nil, lineErrorf(path, r.line, "name %q already listed on line %d", r.name, byName[r.name])
		}
		names[r.idx], lineOf[r.idx], byName[r.name] = r.name, r.line, r.line
	}
	return names, nil
}

// edgeRef names an edge of a split file, for messages.
type edgeRef struct {
	file string
	edge int
}

// ogbGlobalizer turns split edges into triples of global ids and collects
// each relation's types.
type ogbGlobalizer struct {
	*ogbNodes
	rels      *Vocab
	schema    *Schema
	firstEdge []edgeRef // per relation, the edge that fixed its types
}

func (g *ogbGlobalizer) triples(sp *ogbSplit) ([]Triple, error) {
	ts := make([]Triple, len(sp.head))
	for i := range ts {
		r := sp.rel[i]
		if r < 0 || r >= int64(g.rels.Len()) {
			return nil, fmt.Errorf("%s: edge %d (0-based): relation %d out of range [0, %d)", sp.file, i, r, g.rels.Len())
		}
		ht, tt := sp.headType[i], sp.tailType[i]
		switch st, ot := g.schema.SubjectType[r], g.schema.ObjectType[r]; {
		case st < 0:
			g.schema.SubjectType[r], g.schema.ObjectType[r] = ht, tt
			g.firstEdge[r] = edgeRef{sp.file, i}
		case st != ht || ot != tt:
			first := g.firstEdge[r]
			return nil, fmt.Errorf("%s: edge %d (0-based): relation %q links types (%s, %s), but %s edge %d links (%s, %s)",
				sp.file, i, g.rels.Name(int32(r)), g.types.Name(ht), g.types.Name(tt),
				first.file, first.edge, g.types.Name(st), g.types.Name(ot))
		}
		s, err := g.global(sp.file, i, "head", ht, sp.head[i])
		if err != nil {
			return nil, err
		}
		o, err := g.global(sp.file, i, "tail", tt, sp.tail[i])
		if err != nil {
			return nil, err
		}
		ts[i] = Triple{s, int32(r), o}
	}
	return ts, nil
}
