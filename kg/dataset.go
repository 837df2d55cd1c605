package kg

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A Dataset is a knowledge graph split into train, valid and test triples
// that share one pair of vocabularies.
type Dataset struct {
	Name                string // the directory's base name, e.g. "FB15k-237"
	Dir                 string
	Entities, Relations *Vocab
	Train, Valid, Test  []Triple

	// Schema holds entity types and per-relation domain constraints; nil
	// when the data set has no type information.
	Schema *Schema

	// Negatives holds the candidate entities that OGB supplies for ranking
	// valid and test triples; nil for data sets that rank against all
	// entities.
	Negatives *Negatives

	// Synthetic is set for a data set sampled from a model (its directory
	// holds SyntheticMarker, which gekc's synth writes): results on it
	// compare with no published table, whatever its name.
	Synthetic bool
}

// SyntheticMarker is the file that marks a directory's data set as sampled
// from a model (Dataset.Synthetic).
const SyntheticMarker = "SYNTHETIC"

// splitNames are the file names of the plain layout, in the order in which
// they are read and checked.
var splitNames = [3]string{"train.txt", "valid.txt", "test.txt"}

// Load reads the data set in dir, detecting its layout.
//
// The plain layout has train.txt, valid.txt and test.txt, each optionally
// gzipped (see ParseTriples for the line format), and optionally
// entity_types.tsv[.gz] with relation_schema.tsv[.gz] for a Schema.
// Entity and relation ids follow the byte order of names, over all splits
// and every typed entity, so they are the same on every run.
//
// The OGB layout is that of OGB's ogbl-biokg download, a directory such
// as dataset/ogbl_biokg holding split/random/{train,valid,test}.pt,
// raw/num-node-dict.csv.gz and, optionally, mapping/. OGB numbers nodes
// within their type; Load gives each type a block of ids, types in sorted
// order and each block in OGB's order, as OGB's own example code does, so
// that results compare. Entities are named "type:name" from mapping/, or
// "type:index" without it; relation ids are OGB's. Such a Dataset has a
// Schema, taken from the edges' head and tail types, and Negatives.
//
// Every error about the content of a file names the file and, for text
// files, the 1-based line.
func Load(dir string) (*Dataset, error) {
	ogb, err := isOGBDir(dir)
	if err != nil {
		return nil, err
	}
	load := loadPlain
	if ogb {
		load = loadOGB
	}
	ds, err := load(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, SyntheticMarker)); err == nil {
		ds.Synthetic = true
	}
	return ds, nil
}

// TrainingSplit returns the path of dir's training split when dir holds a
// data set in a layout Load reads (train.txt[.gz], or OGB's
// split/random/train.pt), and "" when it holds none.
func TrainingSplit(dir string) (string, error) {
	ogb, err := isOGBDir(dir)
	if err != nil || ogb {
		return filepath.Join(dir, filepath.FromSlash(ogbSplitDir), "train.pt"), err
	}
	return findInput(dir, splitNames[0])
}

func datasetName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Base(dir)
}

func loadPlain(dir string) (*Dataset, error) {
	var paths [3]string
	for i, name := range splitNames {
		p, err := findInput(dir, name)
		if err != nil {
			return nil, err
		}
		if p == "" {
			return nil, fmt.Errorf("kg: %s has no %s[.gz] (nor OGB's split/random/train.pt)", dir, name)
		}
		paths[i] = p
	}
	typesPath, err := findInput(dir, "entity_types.tsv")
	if err != nil {
		return nil, err
	}
	schemaPath, err := findInput(dir, "relation_schema.tsv")
	if err != nil {
		return nil, err
	}
	switch {
	case typesPath != "" && schemaPath == "":
		return nil, errMissingSchemaFile(dir, filepath.Base(typesPath), "relation_schema.tsv")
	case typesPath == "" && schemaPath != "":
		return nil, errMissingSchemaFile(dir, filepath.Base(schemaPath), "entity_types.tsv")
	}

	var b plainBuilder
	for i, p := range paths {
		err := readInput(p, func(r io.Reader) error { return b.addSplit(i, r, p) })
		if err != nil {
			return nil, err
		}
	}
	if typesPath != "" {
		if err := readInput(typesPath, func(r io.Reader) error { return b.addEntityTypes(r, typesPath) }); err != nil {
			return nil, err
		}
		if err := readInput(schemaPath, func(r io.Reader) error { return b.addRelationSchema(r, schemaPath) }); err != nil {
			return nil, err
		}
	}
	d, err := b.build()
	if err != nil {
		return nil, err
	}
	d.Name, d.Dir = datasetName(dir), dir
	return d, nil
}

// A plainBuilder assembles a Dataset from the files of the plain layout,
// read in order: the three splits, then entity types, then the schema.
// It works on readers so that tests and fuzzers can feed it directly.
type plainBuilder struct {
	ents, rels interner
	files      [3]string
	splits     [3][]Triple
	types      *typeTable
}

func (b *plainBuilder) addSplit(i int, r io.Reader, file string) error {
	ts, err := parseTriples(r, file, &b.ents, &b.rels)
	if err != nil {
		return err
	}
	b.files[i], b.splits[i] = file, ts
	return nil
}

func (b *plainBuilder) addEntityTypes(r io.Reader, file string) error {
	b.types = new(typeTable)
	return b.types.parseEntityTypes(r, file, &b.ents)
}

func (b *plainBuilder) addRelationSchema(r io.Reader, file string) error {
	if b.types == nil {
		return errors.New("kg: relation schema without entity types")
	}
	return b.types.parseRelationSchema(r, file, &b.rels)
}

func (b *plainBuilder) build() (*Dataset, error) {
	if len(b.splits[0]) == 0 {
		return nil, fmt.Errorf("%s: no triples", b.files[0])
	}
	if b.types != nil {
		if b.types.subject == nil {
			return nil, errors.New("kg: entity types without relation schema")
		}
		for i, ts := range b.splits {
			if err := b.types.checkTriples(ts, b.files[i], &b.ents, &b.rels); err != nil {
				return nil, err
			}
		}
	}
	ents, eperm, err := b.ents.sorted()
	if err != nil {
		return nil, err
	}
	rels, rperm, err := b.rels.sorted()
	if err != nil {
		return nil, err
	}
	d := &Dataset{Entities: ents, Relations: rels}
	for i, ts := range b.splits {
		remap(ts, eperm, rperm)
		if ts == nil {
			ts = []Triple{}
		}
		*d.split(i) = ts
	}
	if b.types != nil {
		if d.Schema, err = b.types.schema(eperm, rperm); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// split returns a pointer to split i: 0 train, 1 valid, 2 test.
func (d *Dataset) split(i int) *[]Triple {
	return [3]*[]Triple{&d.Train, &d.Valid, &d.Test}[i]
}
