package kg

import (
	"archive/zip"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gekc/internal/atomicfile"
)

// UntypedNodeType is the one node type WriteOGB gives the entities of a
// data set without a Schema: OGB's heterogeneous layout needs one.
const UntypedNodeType = "entity"

// WriteOGB writes d into dir in OGB's on-disk layout of ogbl-biokg, the
// one Load reads (see Load and the layout's description in ogb.go):
// raw/num-node-dict.csv.gz, split/random/{train,valid,test}.pt as
// torch.save writes them (zip archives of a pickled dict of int64 numpy
// arrays and lists of type names), mapping/relidx2relname.csv.gz and
// mapping/<type>_entidx2name.csv.gz. For OGB's own LinkPropPredDataset
// it also writes the training graph as that reads it (ogb/io's
// read_csv_heterograph_raw): raw/triplet-type-list.csv.gz and, per
// relation, raw/relations/<subject type>___<relation>___<object type>/
// with edge.csv.gz, num-edge-list.csv.gz and edge_reltype.csv.gz, and
// RELEASE_v1.txt. Each file is written atomically.
//
// d.Negatives must hold k candidates per valid and test triple and side,
// each of the type of the entity it replaces (OGB's head_neg and
// tail_neg). A data set without a Schema is written with the one node
// type UntypedNodeType. Entities are numbered within their type in id
// order and relations keep their ids, so a data set whose types hold
// consecutive blocks of ids in sorted type order (every data set read
// from this layout, and synth's planted graphs) loads back with the same
// ids. Load names OGB's entities "type:name": a name that begins with
// its type and a colon (as Load's own names do) is written without that
// prefix and comes back unchanged; any other comes back prefixed.
//
// Every relation must have a training triple: the layout has no other
// record of a relation's types, and OGB's reader fails on a relation
// without edges. Names that OGB's reader (pandas) would not read back as
// strings (a column of numbers or of True/False, "NA", "null", ...) are
// refused, as are relations whose directories would coincide, and
// arrays too large for a protocol-2 pickle (MaxOGBArray); all before
// any file is written. OGB's reader keeps a processed/ copy of the graph:
// WriteOGB empties that directory so that it is made anew.
func WriteOGB(dir string, d *Dataset) error {
	w, err := newOGBWriter(d)
	if err != nil {
		return fmt.Errorf("kg.WriteOGB %s: %w", dir, err)
	}
	// OGB saves its parsed graph into processed/ without making the
	// directory, and reuses one found there.
	if err := os.RemoveAll(filepath.Join(dir, "processed")); err != nil {
		return err
	}
	for _, sub := range []string{"raw", "mapping", "processed", filepath.FromSlash(ogbSplitDir)} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	header, counts := make([]string, len(w.types)), make([]string, len(w.types))
	for t, name := range w.types {
		header[t], counts[t] = name, strconv.Itoa(w.counts[t])
	}
	err = writeGzipCSV(filepath.Join(dir, "raw", "num-node-dict.csv.gz"), func(row func(...string) error) error {
		if err := row(header...); err != nil {
			return err
		}
		return row(counts...)
	})
	if err != nil {
		return err
	}
	if err := w.writeTrainingGraph(filepath.Join(dir, "raw")); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "RELEASE_v1.txt"), []byte("Written by gekc's kg.WriteOGB in the layout of OGB's ogbl-biokg, version 1.\n"), 0o644); err != nil {
		return err
	}
	for i, name := range [3]string{"train", "valid", "test"} {
		if err := w.writeSplit(filepath.Join(dir, filepath.FromSlash(ogbSplitDir), name+".pt"), name, i); err != nil {
			return err
		}
	}
	err = writeGzipCSV(filepath.Join(dir, "mapping", "relidx2relname.csv.gz"), func(row func(...string) error) error {
		if err := row("rel idx", "rel name"); err != nil {
			return err
		}
		for r := range int32(d.Relations.Len()) {
			if err := row(strconv.Itoa(int(r)), d.Relations.Name(r)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for t, typ := range w.types {
		err := writeGzipCSV(filepath.Join(dir, "mapping", typ+"_entidx2name.csv.gz"), func(row func(...string) error) error {
			if err := row("ent idx", "ent name"); err != nil {
				return err
			}
			for e := range int32(d.Entities.Len()) {
				if w.typeOf(e) == int32(t) {
					if err := row(strconv.Itoa(int(w.local[e])), strings.TrimPrefix(d.Entities.Name(e), typ+":")); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ogbWriter holds what the files need: node types, each entity's index
// within its type, and the checked negatives.
type ogbWriter struct {
	d      *Dataset
	types  []string // sorted, as Load numbers them
	counts []int
	local  []int32 // per entity, its index within its type
	k      int     // negatives per triple and side
	// trainOf[r] up to trainOf[r+1] index relation r's training triples in
	// the order that writeTrainingGraph fills.
	trainOf []int32
}

// relationDir is relation r's directory under raw/relations, as OGB
// names it: the types and the name joined by "___". A name with a slash
// makes nested directories, as OGB's os.path.join does; one that would
// leave raw/relations is refused.
func (w *ogbWriter) relationDir(r int32) (string, error) {
	st, ot := w.relationTypes(r)
	dir := st + "___" + w.d.Relations.Name(r) + "___" + ot
	for _, part := range strings.Split(dir, "/") {
		if part == "" || part == "." || part == ".." {
			return "", fmt.Errorf("relation %q: its directory under raw/relations, %q, is not a plain relative path", w.d.Relations.Name(r), dir)
		}
	}
	return dir, nil
}

// relationTypes returns the names of relation r's subject and object types.
func (w *ogbWriter) relationTypes(r int32) (subject, object string) {
	if s := w.d.Schema; s != nil {
		return s.Types.Name(s.SubjectType[r]), s.Types.Name(s.ObjectType[r])
	}
	return UntypedNodeType, UntypedNodeType
}

// writeTrainingGraph writes the training triples as OGB's raw heterograph:
// each relation's edges (subject and object indices within their types),
// their count and their relation id, and the list of relations with
// their types.
func (w *ogbWriter) writeTrainingGraph(raw string) error {
	d := w.d
	byRelation := make([]int32, len(d.Train)) // training triples grouped by relation, in order
	next := slices.Clone(w.trainOf)
	for i, t := range d.Train {
		byRelation[next[t.R]] = int32(i)
		next[t.R]++
	}
	err := writeGzipCSV(filepath.Join(raw, "triplet-type-list.csv.gz"), func(row func(...string) error) error {
		for r := range int32(d.Relations.Len()) {
			st, ot := w.relationTypes(r)
			if err := row(st, d.Relations.Name(r), ot); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for r := range int32(d.Relations.Len()) {
		rel, _ := w.relationDir(r)
		dir := filepath.Join(raw, "relations", filepath.FromSlash(rel))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		edges := byRelation[w.trainOf[r]:w.trainOf[r+1]]
		err := writeGzipCSV(filepath.Join(dir, "edge.csv.gz"), func(row func(...string) error) error {
			for _, i := range edges {
				t := d.Train[i]
				if err := row(strconv.Itoa(int(w.local[t.S])), strconv.Itoa(int(w.local[t.O]))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		id := strconv.Itoa(int(r))
		err = writeGzipCSV(filepath.Join(dir, "edge_reltype.csv.gz"), func(row func(...string) error) error {
			for range edges {
				if err := row(id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = writeGzipCSV(filepath.Join(dir, "num-edge-list.csv.gz"), func(row func(...string) error) error {
			return row(strconv.Itoa(len(edges)))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *ogbWriter) typeOf(e int32) int32 {
	if w.d.Schema == nil {
		return 0
	}
	return w.d.Schema.EntityType[e]
}

func newOGBWriter(d *Dataset) (*ogbWriter, error) {
	w := &ogbWriter{d: d, types: []string{UntypedNodeType}, local: make([]int32, d.Entities.Len())}
	if d.Schema != nil {
		w.types = d.Schema.Types.Names()
		for t := 1; t < len(w.types); t++ {
			if w.types[t-1] >= w.types[t] {
				return nil, fmt.Errorf("the schema's types are not in sorted order (%q before %q)", w.types[t-1], w.types[t])
			}
		}
	}
	w.counts = make([]int, len(w.types))
	for e := range w.local {
		t := w.typeOf(int32(e))
		w.local[e] = int32(w.counts[t])
		w.counts[t]++
	}
	w.trainOf = make([]int32, d.Relations.Len()+1)
	for i, ts := range [][]Triple{d.Train, d.Valid, d.Test} {
		for j, t := range ts {
			if d.Schema != nil && !d.Schema.Consistent(t) {
				return nil, fmt.Errorf("%s triple %d (0-based) %s breaks the schema", splitWords[i], j, d.tripleNames(t))
			}
			if i == 0 {
				w.trainOf[t.R+1]++
			}
		}
	}
	dirs := map[string]string{} // lower-cased, for case-insensitive file systems
	for r := range d.Relations.Len() {
		name := d.Relations.Name(int32(r))
		if w.trainOf[r+1] == 0 {
			return nil, fmt.Errorf("relation %q has no training triple: OGB's layout records a relation's types by its training edges alone", name)
		}
		w.trainOf[r+1] += w.trainOf[r]
		dir, err := w.relationDir(int32(r))
		if err != nil {
			return nil, err
		}
		if other, ok := dirs[strings.ToLower(dir)]; ok {
			return nil, fmt.Errorf("relations %q and %q would share the directory raw/relations/%s", other, name, dir)
		}
		dirs[strings.ToLower(dir)] = name
	}
	if err := pandasReadsAsStrings("relation", d.Relations.Names()); err != nil {
		return nil, err
	}
	if err := pandasReadsAsStrings("node type", w.types); err != nil {
		return nil, err
	}
	if int64(len(d.Train)) > MaxOGBArray {
		return nil, fmt.Errorf("train: %d triples exceed the %d elements a protocol-2 pickle holds for sure (MaxOGBArray)", len(d.Train), MaxOGBArray)
	}
	n := d.Negatives
	if n == nil {
		return nil, fmt.Errorf("no negatives: OGB's valid and test files carry head_neg and tail_neg for every triple")
	}
	w.k = -1
	for _, c := range []struct {
		what    string
		triples []Triple
		rows    [][]int32
		subject bool
	}{
		{"valid head", d.Valid, n.ValidHead, true}, {"valid tail", d.Valid, n.ValidTail, false},
		{"test head", d.Test, n.TestHead, true}, {"test tail", d.Test, n.TestTail, false},
	} {
		if len(c.rows) != len(c.triples) {
			return nil, fmt.Errorf("%d rows of %s negatives for %d triples", len(c.rows), c.what, len(c.triples))
		}
		for i, row := range c.rows {
			if w.k < 0 {
				w.k = len(row)
			}
			if len(row) != w.k {
				return nil, fmt.Errorf("%s negatives of triple %d (0-based): %d, not %d as before (OGB's arrays are n x k)", c.what, i, len(row), w.k)
			}
			e := c.triples[i].O
			if c.subject {
				e = c.triples[i].S
			}
			for _, x := range row {
				if x < 0 || int(x) >= len(w.local) {
					return nil, fmt.Errorf("%s negatives of triple %d (0-based): entity %d out of range", c.what, i, x)
				}
				if w.typeOf(x) != w.typeOf(e) {
					return nil, fmt.Errorf("%s negatives of triple %d (0-based): %q is not of the type of %q", c.what, i, d.Entities.Name(x), d.Entities.Name(e))
				}
			}
		}
	}
	switch {
	case w.k < 0:
		w.k = 0 // no valid or test triples: arrays of shape (0, 0)
	case w.k == 0:
		return nil, fmt.Errorf("no negatives per triple (k = 0)")
	}
	for i, n := range []int{len(d.Valid), len(d.Test)} {
		if int64(n)*int64(w.k) > MaxOGBArray {
			return nil, fmt.Errorf("%s: %d triples x %d negatives exceed the %d elements a protocol-2 pickle holds for sure (MaxOGBArray)", splitWords[i+1], n, w.k, MaxOGBArray)
		}
	}
	return w, nil
}

var splitWords = [3]string{"train", "valid", "test"}

// MaxOGBArray is the most elements an array of WriteOGB's may have. A
// protocol-2 pickle holds an array's bytes as one str of at most 4 GiB of
// UTF-8, Latin-1 bytes from 0x80 taking two: ids below 2^31 have four
// zero bytes, so an element takes at most 12.
const MaxOGBArray = math.MaxUint32 / 12

// pandasNA are the strings pandas.read_csv reads as missing by default.
var pandasNA = []string{"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
	"1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}

// pandasReadsAsStrings refuses names that OGB's reader, pandas.read_csv
// with its defaults, would not give back as the same strings: a missing
// value, or a column every name of which is a number or a boolean.
func pandasReadsAsStrings(what string, names []string) error {
	numbers, booleans := 0, 0
	for _, name := range names {
		if slices.Contains(pandasNA, name) {
			return fmt.Errorf("%s name %q reads as a missing value in OGB's reader (pandas): rename it", what, name)
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(name), 64); err == nil {
			numbers++
		}
		if b := strings.ToLower(name); b == "true" || b == "false" {
			booleans++
		}
	}
	if len(names) > 0 && (numbers == len(names) || booleans == len(names)) {
		return fmt.Errorf("every %s name is a number or a boolean (%q, ...), which OGB's reader (pandas) would not read as names: rename them", what, names[0])
	}
	return nil
}

func (d *Dataset) tripleNames(t Triple) string {
	return fmt.Sprintf("(%s, %s, %s)", d.Entities.Name(t.S), d.Relations.Name(t.R), d.Entities.Name(t.O))
}

// writeSplit writes split i as torch.save writes a dict: a zip archive of
// <stem>/data.pkl and <stem>/version, stored uncompressed.
func (w *ogbWriter) writeSplit(path, stem string, i int) error {
	ts := *w.d.split(i)
	n := len(ts)
	column := func(f func(Triple) int64) pickleValue {
		return pickleValue{shape: []int{n}, at: func(j int) int64 { return f(ts[j]) }}
	}
	typeNames := func(f func(Triple) int32) pickleValue {
		return pickleValue{n: n, str: func(j int) string { return w.types[w.typeOf(f(ts[j]))] }}
	}
	keys := []string{"head", "relation", "tail", "head_type", "tail_type"}
	values := []pickleValue{
		column(func(t Triple) int64 { return int64(w.local[t.S]) }),
		column(func(t Triple) int64 { return int64(t.R) }),
		column(func(t Triple) int64 { return int64(w.local[t.O]) }),
		typeNames(func(t Triple) int32 { return t.S }),
		typeNames(func(t Triple) int32 { return t.O }),
	}
	if i > 0 {
		heads, tails := w.d.Negatives.ValidHead, w.d.Negatives.ValidTail
		if i == 2 {
			heads, tails = w.d.Negatives.TestHead, w.d.Negatives.TestTail
		}
		negatives := func(rows [][]int32) pickleValue {
			return pickleValue{shape: []int{n, w.k}, at: func(j int) int64 { return int64(w.local[rows[j/w.k][j%w.k]]) }}
		}
		keys = append(keys, "head_neg", "tail_neg")
		values = append(values, negatives(heads), negatives(tails))
	}
	return atomicfile.Write(path, 0o644, func(f io.Writer) error {
		z := zip.NewWriter(f)
		data, err := z.CreateHeader(&zip.FileHeader{Name: stem + "/data.pkl", Method: zip.Store})
		if err != nil {
			return err
		}
		if err := newPickleWriter(data).writeDict(keys, values); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		version, err := z.CreateHeader(&zip.FileHeader{Name: stem + "/version", Method: zip.Store})
		if err != nil {
			return err
		}
		if _, err := io.WriteString(version, "3\n"); err != nil {
			return err
		}
		return z.Close()
	})
}

// writeGzipCSV writes the rows that rows emits as a gzipped CSV file,
// atomically.
func writeGzipCSV(path string, rows func(row func(...string) error) error) error {
	return atomicfile.Write(path, 0o644, func(f io.Writer) error {
		z := gzip.NewWriter(f)
		c := csv.NewWriter(z)
		if err := rows(func(rec ...string) error { return c.Write(rec) }); err != nil {
			return err
		}
		if c.Flush(); c.Error() != nil {
			return c.Error()
		}
		return z.Close()
	})
}
