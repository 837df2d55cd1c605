package kg

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nlpodyssey/gopickle/types"
)

// The fixtures are written by testdata/make_ogb_fixture.py; the expected
// values below restate what that script writes, in global ids: types sort
// to disease (ids 0-1), drug (2-4), protein (5-7).
var (
	wantOGBTrain = []Triple{{0, 0, 5}, {1, 0, 7}, {2, 1, 0}, {3, 1, 1}, {4, 1, 1},
		{2, 2, 6}, {4, 2, 7}, {5, 3, 6}, {6, 3, 7}, {7, 3, 5}, {5, 3, 6}}
	wantOGBValid     = []Triple{{3, 2, 5}, {0, 0, 6}}
	wantOGBTest      = []Triple{{4, 1, 0}, {7, 3, 6}}
	wantOGBNegatives = Negatives{
		ValidHead: [][]int32{{2, 3, 4}, {0, 1, 0}},
		ValidTail: [][]int32{{6, 7, 5}, {6, 7, 5}},
		TestHead:  [][]int32{{2, 3, 4}, {5, 6, 7}},
		TestTail:  [][]int32{{1, 0, 1}, {6, 7, 5}},
	}
)

func TestLoadOGB(t *testing.T) {
	for _, tc := range []struct {
		dir       string
		entities  []string
		relations []string
	}{
		{
			// zip format, numpy arrays, lists of str, mapping files
			"testdata/ogbl_biokg_tiny",
			[]string{"disease:C0002395", "disease:C0011849", "drug:CID000002244", "drug:CID000003672",
				"drug:CID000005090", "protein:348", "protein:5743", "protein:7124"},
			[]string{"disease-protein", "drug-disease", "drug-protein", "protein-protein_binding"},
		},
		{
			// legacy format, torch tensors, numpy str arrays, no mapping
			"testdata/ogbl_biokg_tiny_legacy",
			[]string{"disease:0", "disease:1", "drug:0", "drug:1", "drug:2", "protein:0", "protein:1", "protein:2"},
			[]string{"0", "1", "2", "3"},
		},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			d, err := Load(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Entities.Names(); !reflect.DeepEqual(got, tc.entities) {
				t.Errorf("entities %q, want %q", got, tc.entities)
			}
			if got := d.Relations.Names(); !reflect.DeepEqual(got, tc.relations) {
				t.Errorf("relations %q, want %q", got, tc.relations)
			}
			for _, c := range []struct {
				name      string
				got, want []Triple
			}{{"train", d.Train, wantOGBTrain}, {"valid", d.Valid, wantOGBValid}, {"test", d.Test, wantOGBTest}} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s %v, want %v", c.name, c.got, c.want)
				}
			}
			if !reflect.DeepEqual(*d.Negatives, wantOGBNegatives) {
				t.Errorf("negatives %v, want %v", *d.Negatives, wantOGBNegatives)
			}
			s := d.Schema
			if got, want := s.Types.Names(), []string{"disease", "drug", "protein"}; !reflect.DeepEqual(got, want) {
				t.Errorf("types %q, want %q", got, want)
			}
			if want := []int32{0, 0, 1, 1, 1, 2, 2, 2}; !reflect.DeepEqual(s.EntityType, want) {
				t.Errorf("entity types %v, want %v", s.EntityType, want)
			}
			if want := []int32{0, 1, 1, 2}; !reflect.DeepEqual(s.SubjectType, want) {
				t.Errorf("subject types %v, want %v", s.SubjectType, want)
			}
			if want := []int32{2, 0, 2, 2}; !reflect.DeepEqual(s.ObjectType, want) {
				t.Errorf("object types %v, want %v", s.ObjectType, want)
			}
			// OGB's negatives are type-consistent corruptions.
			for i, tr := range d.Valid {
				for _, e := range d.Negatives.ValidHead[i] {
					if !s.Consistent(Triple{e, tr.R, tr.O}) {
						t.Errorf("valid %d: head negative %d breaks the schema", i, e)
					}
				}
			}
			if st := d.Stats(); st.Train.Duplicates != 1 {
				t.Errorf("train duplicates %d, want 1", st.Train.Duplicates)
			}
		})
	}
}

// copyFixture copies the zip-format fixture into a temporary directory so
// that a test can break one file.
func copyFixture(t *testing.T) string {
	t.Helper()
	src := "testdata/ogbl_biokg_tiny"
	dst := filepath.Join(t.TempDir(), "ogbl_biokg")
	err := filepath.WalkDir(src, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestLoadOGBFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		content    []byte // nil removes the file
		gzip       bool
		want       string // a substring of the error, after replacing DIR
	}{
		{"no counts", "raw/num-node-dict.csv.gz", nil, false, "num-node-dict.csv.gz: no such file"},
		{"counts not integers", "raw/num-node-dict.csv.gz", []byte("drug,protein,disease\n3,x,2\n"), true,
			`DIR/raw/num-node-dict.csv.gz:2: count "x" of type "protein" is not a non-negative integer`},
		{"counts ragged", "raw/num-node-dict.csv.gz", []byte("drug,protein,disease\n3,3\n"), true,
			"DIR/raw/num-node-dict.csv.gz:2: wrong number of fields"},
		{"two graphs", "raw/num-node-dict.csv.gz", []byte("drug,protein,disease\n3,3,2\n3,3,2\n"), true,
			"DIR/raw/num-node-dict.csv.gz:3: more than one row of counts"},
		{"type missing", "raw/num-node-dict.csv.gz", []byte("drug,protein\n3,3\n"), true,
			`DIR/split/random/train.pt: head_type of edge 0 (0-based) is "disease", not a type of num-node-dict.csv.gz`},
		{"too few nodes", "raw/num-node-dict.csv.gz", []byte("drug,protein,disease\n3,2,2\n"), true,
			`DIR/split/random/valid.pt: edge 0 (0-based): tail_neg 2 out of range for type "protein" of 2 nodes`},
		{"not a torch file", "split/random/valid.pt", []byte("\x80\x02}q\x00."), false,
			"DIR/split/random/valid.pt: neither a zip archive nor a complete legacy torch file"},
		{"empty torch file", "split/random/test.pt", []byte{}, false,
			"DIR/split/random/test.pt: too short for a torch file"},
		{"truncated zip", "split/random/valid.pt", []byte("PK\x03\x04\x00\x00"), false,
			"DIR/split/random/valid.pt: zip: not a valid zip file"},
		{"relation names short", "mapping/relidx2relname.csv.gz", []byte("rel idx,rel name\n0,a\n1,b\n"), true,
			"DIR/split/random/train.pt: edge 5 (0-based): relation 2 out of range [0, 2)"},
		{"relation names gap", "mapping/relidx2relname.csv.gz", []byte("rel idx,rel name\n0,a\n2,b\n"), true,
			"DIR/mapping/relidx2relname.csv.gz:3: index 2 out of range for 2 rows"},
		{"relation names header", "mapping/relidx2relname.csv.gz", []byte("idx,name\n0,a\n"), true,
			`DIR/mapping/relidx2relname.csv.gz:1: header ["idx" "name"], want ["rel idx" "rel name"]`},
		{"entity index twice", "mapping/drug_entidx2name.csv.gz", []byte("ent idx,ent name\n0,a\n0,b\n2,c\n"), true,
			"DIR/mapping/drug_entidx2name.csv.gz:3: index 0 already listed on line 2"},
		{"entity index beyond count", "mapping/drug_entidx2name.csv.gz", []byte("ent idx,ent name\n0,a\n1,b\n3,c\n"), true,
			`DIR/mapping/drug_entidx2name.csv.gz:4: index 3 out of range for 3 rows`},
		{"entity names too few", "mapping/drug_entidx2name.csv.gz", []byte("ent idx,ent name\n0,a\n1,b\n"), true,
			`DIR/mapping/drug_entidx2name.csv.gz: 2 names for 3 nodes`},
		{"entity index not a number", "mapping/drug_entidx2name.csv.gz", []byte("ent idx,ent name\n0,a\nx,b\n2,c\n"), true,
			`DIR/mapping/drug_entidx2name.csv.gz:3: index "x" is not a non-negative integer`},
		{"entity names repeat", "mapping/drug_entidx2name.csv.gz", []byte("ent idx,ent name\n0,a\n1,a\n2,c\n"), true,
			`DIR/mapping/drug_entidx2name.csv.gz:3: name "a" already listed on line 2`},
		{"quoted names", "mapping/drug_entidx2name.csv.gz", []byte("ent idx,ent name\n0,\"a,b\"\n1,\"unterminated\n"), true,
			`DIR/mapping/drug_entidx2name.csv.gz:3: extraneous or missing " in quoted-field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyFixture(t)
			path := filepath.Join(dir, filepath.FromSlash(tc.file))
			switch {
			case tc.content == nil:
				os.Remove(path)
			case tc.gzip:
				writeFile(t, path, string(tc.content))
			default:
				if err := os.WriteFile(path, tc.content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(dir)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got error\n\t%v\nwant one containing\n\t%s", err, want)
			}
		})
	}
}

// TestLoadOGBTruncated cuts each fixture split file short at many points:
// every cut must give an error, never a panic or a wrong data set.
func TestLoadOGBTruncated(t *testing.T) {
	for _, fixture := range []string{"testdata/ogbl_biokg_tiny", "testdata/ogbl_biokg_tiny_legacy"} {
		for _, split := range []string{"train", "valid"} {
			orig, err := os.ReadFile(filepath.Join(fixture, "split", "random", split+".pt"))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), split+".pt")
			for n := 0; n < len(orig); n += 7 {
				if err := os.WriteFile(path, orig[:n], 0o644); err != nil {
					t.Fatal(err)
				}
				if _, err := readPT(path); err == nil {
					t.Errorf("%s/%s.pt cut to %d of %d bytes: no error", fixture, split, n, len(orig))
				}
			}
		}
	}
}

// TestOGBSplitFromDict covers what a well-formed torch file can still get
// wrong.
func TestOGBSplitFromDict(t *testing.T) {
	typeVocab, _ := NewVocab([]string{"a", "b"})
	nodes := &ogbNodes{types: typeVocab, counts: []int{2, 2}, offsets: []int32{0, 2, 4}}
	ints := func(xs ...int) *types.List {
		l := types.NewList()
		for _, x := range xs {
			l.Append(x)
		}
		return l
	}
	strList := func(xs ...string) *types.List {
		l := types.NewList()
		for _, x := range xs {
			l.Append(x)
		}
		return l
	}
	good := func() map[string]any {
		return map[string]any{
			"head": ints(0, 1), "relation": ints(0, 0), "tail": ints(1, 0),
			"head_type": strList("a", "a"), "tail_type": strList("b", "b"),
		}
	}
	if _, err := ogbSplitFromDict(good(), "x.pt", nodes, false); err != nil {
		t.Fatalf("good dict: %v", err)
	}
	withNegatives := func() map[string]any {
		m := good()
		m["head_neg"] = ndarrayOf([]int{2, 3}, 0, 1, 0, 1, 1, 1)
		m["tail_neg"] = ndarrayOf([]int{2, 3}, 1, 0, 1, 0, 0, 0)
		return m
	}
	sp, err := ogbSplitFromDict(withNegatives(), "x.pt", nodes, true)
	if err != nil {
		t.Fatalf("good dict with negatives: %v", err)
	}
	// Heads are of type a (ids 0-1), tails of type b (ids 2-3).
	if want := [][]int32{{0, 1, 0}, {1, 1, 1}}; !reflect.DeepEqual(sp.headNeg, want) {
		t.Errorf("head negatives %v, want %v", sp.headNeg, want)
	}
	if want := [][]int32{{3, 2, 3}, {2, 2, 2}}; !reflect.DeepEqual(sp.tailNeg, want) {
		t.Errorf("tail negatives %v, want %v", sp.tailNeg, want)
	}
	for _, tc := range []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"no head", func(m map[string]any) { delete(m, "head") }, `x.pt: no "head"`},
		{"no head_type", func(m map[string]any) { delete(m, "head_type") }, `x.pt: no "head_type"; kg reads the heterogeneous ogbl-biokg layout`},
		{"short tail", func(m map[string]any) { m["tail"] = ints(1) }, `x.pt: "tail" has shape [1], want (2,)`},
		{"head of str", func(m map[string]any) { m["head"] = strList("0", "1") }, `x.pt: "head": list item 0 is string, want int`},
		{"short types", func(m map[string]any) { m["tail_type"] = strList("b") }, `x.pt: "tail_type" has 1 entries for 2 edges`},
		{"types of int", func(m map[string]any) { m["tail_type"] = ints(1, 1) }, `x.pt: "tail_type": item 0 is int, want str`},
		{"unknown type", func(m map[string]any) { m["tail_type"] = strList("b", "c") }, `x.pt: tail_type of edge 1 (0-based) is "c"`},
		{"head is a str", func(m map[string]any) { m["head"] = "0" }, `x.pt: "head": string is not an integer array`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good()
			tc.change(m)
			_, err := ogbSplitFromDict(m, "x.pt", nodes, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"no head_neg", func(m map[string]any) { delete(m, "head_neg") }, `x.pt: no "head_neg"`},
		{"negatives 1-D", func(m map[string]any) { m["tail_neg"] = ints(0, 1) }, `x.pt: "tail_neg" has shape [2], want (2, k)`},
		{"negative out of range", func(m map[string]any) { m["tail_neg"] = ndarrayOf([]int{2, 3}, 1, 0, 1, 0, 2, 0) },
			`x.pt: edge 1 (0-based): tail_neg 2 out of range for type "b" of 2 nodes`},
		{"ragged negatives", func(m map[string]any) { m["tail_neg"] = ndarrayOf([]int{2, 2}, 1, 0, 1, 0) },
			`x.pt: 3 head negatives but 2 tail negatives per edge`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := withNegatives()
			tc.change(m)
			_, err := ogbSplitFromDict(m, "x.pt", nodes, true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// ndarrayOf returns a little-endian int64 numpy array as unpickled.
func ndarrayOf(shape []int, xs ...int64) *ndarray {
	raw := make([]byte, 8*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return &ndarray{dims: shape, dtype: &dtype{kind: 'i', size: 8}, raw: newByteReader(raw, len(raw))}
}

// TestOGBSchemaConflict checks that a relation linking two different type
// pairs is rejected with both places named.
func TestOGBSchemaConflict(t *testing.T) {
	typeVocab, _ := NewVocab([]string{"a", "b"})
	rels, _ := NewVocab([]string{"r"})
	g := ogbGlobalizer{ogbNodes: &ogbNodes{types: typeVocab, counts: []int{2, 2}, offsets: []int32{0, 2, 4}}, rels: rels,
		schema: &Schema{SubjectType: []int32{-1}, ObjectType: []int32{-1}}, firstEdge: make([]edgeRef, 1)}
	train := &ogbSplit{file: "train.pt", head: []int64{0}, rel: []int64{0}, tail: []int64{1}, headType: []int32{0}, tailType: []int32{1}}
	if _, err := g.triples(train); err != nil {
		t.Fatal(err)
	}
	test := &ogbSplit{file: "test.pt", head: []int64{0, 1}, rel: []int64{0, 0}, tail: []int64{1, 1}, headType: []int32{0, 1}, tailType: []int32{1, 1}}
	_, err := g.triples(test)
	want := `test.pt: edge 1 (0-based): relation "r" links types (b, b), but train.pt edge 0 links (a, b)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}

	valid := &ogbSplit{file: "valid.pt", head: []int64{0}, rel: []int64{0}, tail: []int64{2}, headType: []int32{0}, tailType: []int32{1}}
	_, err = g.triples(valid)
	want = `valid.pt: edge 0 (0-based): tail 2 out of range for type "b" of 2 nodes`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}

}
