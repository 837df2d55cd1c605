package kg_test

import (
	"fmt"
	"log"
	"strings"

	"gekc/kg"
)

func ExampleLoad() {
	// testdata/typed_tiny has train/valid/test.txt, entity_types.tsv and
	// relation_schema.tsv, in the layout of the shared Hetionet data.
	d, err := kg.Load("testdata/typed_tiny")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d)
	t := d.Test[0]
	fmt.Printf("first test triple: %s | %s | %s\n",
		d.Entities.Name(t.S), d.Relations.Name(t.R), d.Entities.Name(t.O))
	// Output:
	// typed_tiny: 6 entities, 2 relations, 5/1/2 train/valid/test triples, 3 entity types
	// first test triple: Compound::ibuprofen | treats | Disease::head ache
}

func ExampleLoad_ogb() {
	// A tiny copy of OGB's ogbl_biokg download: split/random/*.pt torch
	// files, raw/num-node-dict.csv.gz and mapping/*.csv.gz.
	d, err := kg.Load("testdata/ogbl_biokg_tiny")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d)
	t := d.Valid[0]
	fmt.Printf("valid triple 0: %s %s %s\n", d.Entities.Name(t.S), d.Relations.Name(t.R), d.Entities.Name(t.O))
	fmt.Print("its head is ranked against:")
	for _, e := range d.Negatives.ValidHead[0] {
		fmt.Print(" ", d.Entities.Name(e))
	}
	fmt.Println()
	// Output:
	// ogbl_biokg_tiny: 8 entities, 4 relations, 11/2/2 train/valid/test triples, 3 entity types
	// valid triple 0: drug:CID000003672 drug-protein protein:348
	// its head is ranked against: drug:CID000002244 drug:CID000003672 drug:CID000005090
}

func ExampleDataset_Stats() {
	d, err := kg.Load("testdata/typed_tiny")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(d.Stats())
	// Output:
	// 6 entities, 2 relations, 3 entity types
	//   split  triples  duplicates  entities  relations  in train  unseen entities  unseen triples
	//   train        5           1         5          2         -                -               -
	//   valid        1           0         2          1         0                1               1
	//    test        2           0         4          1         0                0               0
}

func ExampleParseTriples() {
	// Only tabs separate fields; CRLF line ends are fine.
	in := "Side Effect::C0000737\toccurs in\tAnatomy::liver\r\n" +
		"Compound::DB00945\ttreats\tDisease::head ache\r\n"
	tf, err := kg.ParseTriples(strings.NewReader(in), "example.txt")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tf.Entities.Names())
	fmt.Println(tf.Triples)

	_, err = kg.ParseTriples(strings.NewReader("a\tr\tb\nc\td\n"), "bad.txt")
	fmt.Println(err)
	// Output:
	// [Anatomy::liver Compound::DB00945 Disease::head ache Side Effect::C0000737]
	// [{3 0 0} {1 1 2}]
	// bad.txt:2: expected 3 tab-separated fields, got 2
}

func ExampleFilter() {
	// Filtered ranking: when ranking the object of a test triple (s, r, ?),
	// the other known answers of (s, r) do not count as mistakes.
	train := []kg.Triple{{S: 0, R: 0, O: 1}, {S: 0, R: 0, O: 2}}
	test := []kg.Triple{{S: 0, R: 0, O: 3}}
	f := kg.NewFilter(train, test)

	scores := []float64{0.1, 0.9, 0.8, 0.7, 0.2} // a model's scores of (0, 0, o)
	q := test[0]
	rank := 1
	for o, score := range scores {
		if score > scores[q.O] && !f.Contains(kg.Triple{S: q.S, R: q.R, O: int32(o)}) {
			rank++
		}
	}
	fmt.Println("known objects:", f.Objects(q.S, q.R))
	fmt.Println("filtered rank:", rank)
	// Output:
	// known objects: [1 2 3]
	// filtered rank: 1
}

func ExampleSchema_EntitiesOfType() {
	d, err := kg.Load("testdata/typed_tiny")
	if err != nil {
		log.Fatal(err)
	}
	s := d.Schema
	binds, _ := d.Relations.Index("binds")
	// A type-constrained model ranks the objects of "binds" among genes only.
	for _, e := range s.EntitiesOfType(s.ObjectType[binds]) {
		fmt.Println(d.Entities.Name(e))
	}
	// Output:
	// Gene::PTGS1
	// Gene::PTGS2
}

// A name that is not in the vocabulary is an error that suggests the
// names closest to it.
func ExampleVocab_Lookup() {
	rels, err := kg.NewVocab([]string{"isa", "location_of", "part_of"})
	if err != nil {
		log.Fatal(err)
	}
	id, err := rels.Lookup("relation", "part_of")
	fmt.Println(id, err)
	_, err = rels.Lookup("relation", "partof")
	fmt.Println(err)
	// Output:
	// 2 <nil>
	// unknown relation "partof"; did you mean "part_of"?
}
