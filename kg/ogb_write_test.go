package kg

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// zipMember returns the bytes of the archive member whose name ends in
// suffix.
func zipMember(t *testing.T, path, suffix string) []byte {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		if strings.HasSuffix(f.Name, suffix) {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("%s has no member *%s", path, suffix)
	return nil
}

// A data set read from OGB's layout and written back is the same data set,
// and each split's pickle is, byte for byte, the one torch.save wrote for
// the fixture (torch 1.13, numpy 1.24): what torch.load and OGB's
// LinkPropPredDataset read, they read from WriteOGB's files too.
func TestWriteOGBIsWhatTorchWrote(t *testing.T) {
	const fixture = "testdata/ogbl_biokg_tiny"
	d, err := Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteOGB(dir, d); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"train", "valid", "test"} {
		rel := filepath.Join(filepath.FromSlash(ogbSplitDir), name+".pt")
		want := zipMember(t, filepath.Join(fixture, rel), "/data.pkl")
		got := zipMember(t, filepath.Join(dir, rel), "/data.pkl")
		if !bytes.Equal(got, want) {
			t.Errorf("%s: data.pkl differs from torch's (%d bytes, torch %d); first difference at byte %d", name, len(got), len(want), firstDifference(got, want))
		}
		if v := zipMember(t, filepath.Join(dir, rel), "/version"); string(v) != "3\n" {
			t.Errorf("%s: version %q", name, v)
		}
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameDataset(t, back, d)
}

// writeAndLoad writes d in OGB's layout and loads it back.
func writeAndLoad(t *testing.T, d *Dataset) *Dataset {
	t.Helper()
	dir := t.TempDir()
	if err := WriteOGB(dir, d); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func sameDataset(t *testing.T, got, want *Dataset) {
	t.Helper()
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"entities", got.Entities.Names(), want.Entities.Names()},
		{"relations", got.Relations.Names(), want.Relations.Names()},
		{"train", got.Train, want.Train},
		{"valid", got.Valid, want.Valid},
		{"test", got.Test, want.Test},
		{"negatives", *got.Negatives, *want.Negatives},
		{"types", got.Schema.Types.Names(), want.Schema.Types.Names()},
		{"entity types", got.Schema.EntityType, want.Schema.EntityType},
		{"subject types", got.Schema.SubjectType, want.Schema.SubjectType},
		{"object types", got.Schema.ObjectType, want.Schema.ObjectType},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

// someNegatives gives each valid and test triple k candidates per side of
// the type of the entity they replace (any entity when untyped).
func someNegatives(d *Dataset, k int) *Negatives {
	pool := func(e int32) []int32 {
		if d.Schema == nil {
			all := make([]int32, d.Entities.Len())
			for i := range all {
				all[i] = int32(i)
			}
			return all
		}
		return d.Schema.EntitiesOfType(d.Schema.EntityType[e])
	}
	rows := func(ts []Triple, subject bool) [][]int32 {
		out := make([][]int32, len(ts))
		for i, t := range ts {
			e := t.O
			if subject {
				e = t.S
			}
			p := pool(e)
			for j := range k {
				out[i] = append(out[i], p[(i*7+j*3)%len(p)])
			}
		}
		return out
	}
	return &Negatives{ValidHead: rows(d.Valid, true), ValidTail: rows(d.Valid, false), TestHead: rows(d.Test, true), TestTail: rows(d.Test, false)}
}

// A plain typed data set keeps its triples, negatives and entity types
// through OGB's layout; its names come back as Load names OGB's entities, "type:name", where
// the name did not already begin so (Hetionet's "Compound::aspirin").
func TestWriteOGBPlainTyped(t *testing.T) {
	d, err := Load("testdata/typed_tiny")
	if err != nil {
		t.Fatal(err)
	}
	d.Negatives = someNegatives(d, 2)
	back := writeAndLoad(t, d)
	name := func(ds *Dataset, e int32) string {
		n, typ := ds.Entities.Name(e), ds.Schema.Types.Name(ds.Schema.EntityType[e])
		if !strings.HasPrefix(n, typ+":") {
			n = typ + ":" + n
		}
		return n
	}
	named := func(ds *Dataset, ts []Triple) []string {
		var out []string
		for _, tr := range ts {
			out = append(out, name(ds, tr.S)+" "+ds.Relations.Name(tr.R)+" "+name(ds, tr.O))
		}
		return out
	}
	namedRows := func(ds *Dataset, rows [][]int32) [][]string {
		var out [][]string
		for _, row := range rows {
			var r []string
			for _, e := range row {
				r = append(r, name(ds, e))
			}
			out = append(out, r)
		}
		return out
	}
	if got, want := back.Entities.Name(0), d.Entities.Name(0); !strings.HasPrefix(want, "Compound::") || got != want {
		t.Errorf("entity 0 back as %q, want %q (a Hetionet name)", got, want)
	}
	for i, sp := range splitWords {
		if got, want := named(back, *back.split(i)), named(d, *d.split(i)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, want %q", sp, got, want)
		}
	}
	if got, want := namedRows(back, back.Negatives.TestTail), namedRows(d, d.Negatives.TestTail); !reflect.DeepEqual(got, want) {
		t.Errorf("test tail negatives %q, want %q", got, want)
	}
	for e := range int32(d.Entities.Len()) {
		b, ok := back.Entities.Index(name(d, e))
		if !ok || back.Schema.Types.Name(back.Schema.EntityType[b]) != d.Schema.Types.Name(d.Schema.EntityType[e]) {
			t.Errorf("entity %q: not back with its type", d.Entities.Name(e))
		}
	}
}

// blockGraph is a data set of n entities with relations a→b and b→b and
// enough triples that the pickles need 4-byte memo indices and several
// batches. Typed, the first half of the entities is of type "a" and the
// rest "b", or every other one when interleaved; untyped, its Schema is
// nil.
func blockGraph(t *testing.T, n, triples int, typed, interleaved bool) *Dataset {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("n%05d", i)
	}
	ents, err := NewVocab(names)
	if err != nil {
		t.Fatal(err)
	}
	rels, _ := NewVocab([]string{"ab", "bb"})
	d := &Dataset{Name: "block", Entities: ents, Relations: rels}
	typeOf := func(e int) int32 {
		if interleaved {
			return int32(e % 2)
		}
		return int32(2 * e / n)
	}
	var pools [2][]int32
	for e := range n {
		pools[typeOf(e)] = append(pools[typeOf(e)], int32(e))
	}
	for i := range triples {
		a, b := pools[0][i*31%len(pools[0])], pools[1][i*17%len(pools[1])]
		tr := Triple{a, 0, b}
		if i%3 == 0 {
			tr = Triple{pools[1][i*13%len(pools[1])], 1, b}
		}
		split := max(i%10-7, 0) // 8 in 10 to train, 1 to valid, 1 to test
		*d.split(split) = append(*d.split(split), tr)
	}
	if typed {
		types, _ := SortedVocab([]string{"a", "b"})
		d.Schema = &Schema{Types: types, EntityType: make([]int32, n), SubjectType: []int32{0, 1}, ObjectType: []int32{1, 1}}
		for e := range n {
			d.Schema.EntityType[e] = typeOf(e)
		}
	}
	d.Negatives = someNegatives(d, 3)
	return d
}

// A graph in consecutive type blocks comes back with the same ids, typed
// or not (one node type, "entity"), past the pickle's one-byte memo and
// first batch; with its types interleaved, under new ids that keep the
// names (renumbered within each type in id order).
func TestWriteOGBBlocks(t *testing.T) {
	for _, c := range []struct{ typed, interleaved bool }{{true, false}, {false, false}, {true, true}} {
		d := blockGraph(t, 600, 2600, c.typed, c.interleaved)
		back := writeAndLoad(t, d)
		// Where each of d's ids went.
		to := make([]int32, d.Entities.Len())
		for e := range to {
			typ := UntypedNodeType
			if c.typed {
				typ = d.Schema.Types.Name(d.Schema.EntityType[e])
			}
			var ok bool
			if to[e], ok = back.Entities.Index(typ + ":" + d.Entities.Name(int32(e))); !ok {
				t.Fatalf("%+v: entity %q not back as of type %s", c, d.Entities.Name(int32(e)), typ)
			}
			if !c.interleaved && to[e] != int32(e) {
				t.Fatalf("%+v: entity %d back as %d", c, e, to[e])
			}
		}
		for i, sp := range splitWords {
			want := slices.Clone(*d.split(i))
			for j := range want {
				want[j].S, want[j].O = to[want[j].S], to[want[j].O]
			}
			if got := *back.split(i); !reflect.DeepEqual(got, want) {
				t.Errorf("%+v: %s differs (%d triples, want %d)", c, sp, len(got), len(want))
			}
		}
		want := d.Negatives.TestHead
		for _, row := range want {
			for j := range row {
				row[j] = to[row[j]]
			}
		}
		if !reflect.DeepEqual(back.Negatives.TestHead, want) {
			t.Errorf("%+v: negatives differ", c)
		}
	}
}

// What OGB's layout cannot hold is an error before any file is written.
func TestWriteOGBErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(d *Dataset)
		want  string
	}{
		{"no negatives", func(d *Dataset) { d.Negatives = nil }, "no negatives"},
		{"missing row", func(d *Dataset) { d.Negatives.TestHead = d.Negatives.TestHead[1:] }, "rows of test head negatives"},
		{"ragged", func(d *Dataset) { d.Negatives.ValidTail[4] = d.Negatives.ValidTail[4][:2] }, "valid tail negatives of triple 4 (0-based): 2, not 3"},
		{"wrong type", func(d *Dataset) { d.Negatives.ValidHead[0][1] = d.Valid[0].O }, "is not of the type of"},
		{"unused relation", func(d *Dataset) {
			d.Relations, _ = NewVocab([]string{"ab", "bb", "zz"})
			d.Schema.SubjectType, d.Schema.ObjectType = append(d.Schema.SubjectType, 0), append(d.Schema.ObjectType, 0)
		}, `relation "zz" has no training triple`},
		{"escaping name", func(d *Dataset) { d.Relations, _ = NewVocab([]string{"ab", "x/../../../bb"}) }, `is not a plain relative path`},
		{"schema broken", func(d *Dataset) { d.Train[5].O = d.Train[5].S }, "train triple 5 (0-based)"},
		{"numbers", func(d *Dataset) { d.Relations, _ = NewVocab([]string{"0", "1.5"}) }, "every relation name is a number"},
		{"booleans", func(d *Dataset) { d.Relations, _ = NewVocab([]string{"True", "false"}) }, "number or a boolean"},
		{"missing", func(d *Dataset) { d.Relations, _ = NewVocab([]string{"ab", "NA"}) }, `"NA" reads as a missing value`},
		{"one directory", func(d *Dataset) {
			d.Schema = nil
			d.Relations, _ = NewVocab([]string{"Ab", "ab"})
			d.Negatives = someNegatives(d, 3)
		}, `relations "Ab" and "ab" would share the directory raw/relations/entity___ab___entity`},
	} {
		d := blockGraph(t, 60, 200, true, false)
		c.spoil(d)
		dir := filepath.Join(t.TempDir(), "out")
		err := WriteOGB(dir, d)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if _, statErr := os.Stat(dir); statErr == nil {
			t.Errorf("%s: wrote %s anyway", c.name, dir)
		}
	}
}

// FuzzWriteOGB checks that a graph WriteOGB must accept (schema-consistent
// triples, every relation trained, k > 0) loads back the same, in any size
// of memo and batch and with any names (commas, quotes, colons, non-ASCII
// bytes) of entities and relations. The bytes choose the sizes, the
// triples and whether the graph is typed. `make fuzz` runs it.
func FuzzWriteOGB(f *testing.F) {
	f.Add([]byte("\x03\x02\x05abcdef"), "e", 2)
	f.Add([]byte("\x10\x01\xffzzzz\x00\x01"), "x,\"y\":\xe9", 1)
	f.Fuzz(func(t *testing.T, in []byte, name string, k int) {
		if len(in) < 4 || k < 1 || k > 4 || len(name) > 100 || strings.ContainsAny(name, "\r\n/\x00") {
			return
		}
		n := 4 + int(in[0])%40
		typed := in[1]%2 == 0
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("%s%03d", name, i)
		}
		ents, err := NewVocab(names)
		if err != nil {
			return // a name repeats ("a1" + "00" and "a10" + "0" cannot, but be safe)
		}
		rels, err := NewVocab([]string{name + "p", name + "q"})
		if err != nil {
			t.Fatal(err)
		}
		d := &Dataset{Entities: ents, Relations: rels}
		// Relation 0 from the first half of the entities to the second,
		// relation 1 within the second: the schema of a typed graph.
		half := int32(n / 2)
		for i, b := range in[2:] {
			tr := Triple{S: int32(b) % half, R: int32(i % 2), O: half + int32(b/3)%(int32(n)-half)}
			if tr.R == 1 {
				tr.S = half + int32(b/5)%(int32(n)-half)
			}
			sp := i % 3
			if i < 2 {
				sp = 0 // each relation trained
			}
			*d.split(sp) = append(*d.split(sp), tr)
		}
		if typed {
			types, _ := SortedVocab([]string{"a", "b"})
			d.Schema = &Schema{Types: types, EntityType: make([]int32, n), SubjectType: []int32{0, 1}, ObjectType: []int32{1, 1}}
			for e := half; e < int32(n); e++ {
				d.Schema.EntityType[e] = 1
			}
		}
		d.Negatives = someNegatives(d, k)
		back := writeAndLoad(t, d)
		for i := range splitWords {
			if !slices.Equal(*back.split(i), *d.split(i)) {
				t.Fatalf("%s differs", splitWords[i])
			}
		}
		if !reflect.DeepEqual(*back.Negatives, *d.Negatives) {
			t.Fatal("negatives differ")
		}
		if !slices.Equal(back.Relations.Names(), d.Relations.Names()) {
			t.Fatalf("relations %q, want %q", back.Relations.Names(), d.Relations.Names())
		}
		typ := UntypedNodeType
		for e := range int32(n) {
			if typed {
				typ = d.Schema.Types.Name(d.Schema.EntityType[e])
			}
			if got, want := back.Entities.Name(e), typ+":"+names[e]; got != want && got != names[e] {
				t.Fatalf("entity %d back as %q, want %q", e, got, want)
			}
		}
	})
}

// The training graph is also written as OGB's LinkPropPredDataset reads it
// (ogb/io/read_graph_raw.py, read_csv_heterograph_raw): per relation, its
// edges as (head, tail) indices within their types, their count and their
// relation id, and the list of (head type, relation, tail type); read
// back, they are the training triples. A relation named like FB15k-237's
// makes nested directories, as OGB's os.path.join does.
func TestWriteOGBTrainingGraph(t *testing.T) {
	for _, typed := range []bool{true, false} {
		d := blockGraph(t, 60, 300, typed, false)
		d.Relations, _ = NewVocab([]string{"/film/genre", "bb"})
		dir := t.TempDir()
		if err := WriteOGB(dir, d); err != nil {
			t.Fatal(err)
		}
		raw := filepath.Join(dir, "raw")
		var triplets [][]string
		must(t, readCSV(filepath.Join(raw, "triplet-type-list.csv.gz"), func(_ int, rec []string) error {
			triplets = append(triplets, slices.Clone(rec))
			return nil
		}))
		typeOf := func(e int32) string {
			if typed {
				return d.Schema.Types.Name(d.Schema.EntityType[e])
			}
			return UntypedNodeType
		}
		offset := map[string]int32{"a": 0, "b": 30, UntypedNodeType: 0}
		var got []Triple
		for r, tr := range triplets {
			if tr[1] != d.Relations.Name(int32(r)) {
				t.Fatalf("triplet %d: %q", r, tr)
			}
			rel := filepath.Join(raw, "relations", filepath.FromSlash(strings.Join(tr, "___")))
			var edges []Triple
			must(t, readCSV(filepath.Join(rel, "edge.csv.gz"), func(_ int, rec []string) error {
				h, _ := strconv.Atoi(rec[0])
				o, _ := strconv.Atoi(rec[1])
				edges = append(edges, Triple{S: offset[tr[0]] + int32(h), R: int32(r), O: offset[tr[2]] + int32(o)})
				return nil
			}))
			for _, e := range edges {
				if typeOf(e.S) != tr[0] || typeOf(e.O) != tr[2] {
					t.Errorf("typed %v: edge %v not of the types %q", typed, e, tr)
				}
			}
			n := 0
			must(t, readCSV(filepath.Join(rel, "edge_reltype.csv.gz"), func(_ int, rec []string) error {
				if rec[0] != strconv.Itoa(r) {
					t.Errorf("typed %v: relation %d has reltype %q", typed, r, rec[0])
				}
				n++
				return nil
			}))
			must(t, readCSV(filepath.Join(rel, "num-edge-list.csv.gz"), func(_ int, rec []string) error {
				if rec[0] != strconv.Itoa(len(edges)) || n != len(edges) {
					t.Errorf("typed %v: relation %d: %s edges counted, %d reltypes, %d edges", typed, r, rec[0], n, len(edges))
				}
				return nil
			}))
			got = append(got, edges...)
		}
		var want []Triple
		for r := range int32(2) {
			for _, tr := range d.Train {
				if tr.R == r {
					want = append(want, tr)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("typed %v: the raw graph holds %d edges, not the %d training triples by relation", typed, len(got), len(want))
		}
		if _, err := os.Stat(filepath.Join(dir, "RELEASE_v1.txt")); err != nil {
			t.Error(err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
