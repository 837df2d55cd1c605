package synth

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"gekc/models"
	"gekc/resultsdir"
)

// RunSource is the source of a surrogate: the finished run fr's model,
// with the names of the data set it was trained on, under its domain
// constraint if it had one (the data set's schema files are then copied
// beside the surrogate's splits).
func RunSource(fr *resultsdir.Finished) (Source, error) {
	dom, err := fr.Constraint()
	if err != nil {
		return Source{}, err
	}
	src := Source{Model: fr.Model, Domain: dom, Names: VocabNames(fr.Data), Original: fr.Data, SchemaDir: fr.Data.Dir,
		About: []string{fmt.Sprintf("- model: run `%s` (`%s`, %s, trained on %s), its checkpoint in %s", fr.ID, fr.Spec.Model, fr.Spec.Objective, fr.Spec.Dataset, fr.Dir)}}
	if dom != nil {
		src.Schema = fr.Data.Schema
		src.About = append(src.About, "- under the run's domain constraint (its data set's schema files are copied here)")
	}
	return src, nil
}

// PlantSource is the source of a planted model p (Planted), its entities
// and relations numbered. With the files types (type<TAB>count lines) and
// schema (relation<TAB>subject_type<TAB>object_type lines), read relative
// to dir, the graph is typed (ReadShape, every count times typeScale):
// its sizes are the shape's, its samples under the schema's domain
// constraint. Errors name the command's flags (synth -planted).
func PlantSource(p PlantedModel, dir, types, schema string, typeScale float64) (Source, error) {
	var src Source
	if (types == "") != (schema == "") {
		return src, errors.New("-types and -schema go together: the entity type counts and the relation schema of a typed planted graph")
	}
	if types != "" {
		if p.Entities != 0 || p.Relations != 0 {
			return src, fmt.Errorf("-entities %d -relations %d: a typed planted graph takes its sizes from -types and -schema", p.Entities, p.Relations)
		}
		shape, err := ReadShape(inDir(dir, types), inDir(dir, schema), typeScale)
		if err != nil {
			return src, err
		}
		p.Entities, p.Relations, src.Shape = shape.Entities(), shape.NumRelations(), shape
		if src.Schema, err = shape.Schema(); err != nil {
			return src, err
		}
		if src.Domain, err = models.DomainFromSchema(src.Schema); err != nil {
			return src, err
		}
	}
	if p.Entities <= 0 || p.Relations <= 0 || p.Rank <= 0 {
		return src, fmt.Errorf("-planted needs positive -entities, -relations and -rank (got %d, %d, %d)", p.Entities, p.Relations, p.Rank)
	}
	m, err := Planted(p.Name, models.Sizes{Entities: p.Entities, Relations: p.Relations, Rank: p.Rank}, p.Seed, p.Scale, p.Popularity)
	if err != nil {
		return src, err
	}
	src.Model, src.Names, src.Planted = m, NumberedNames(p.Entities, p.Relations), &p
	src.About = []string{
		fmt.Sprintf("- model: planted `%s`, %d entities, %d relations, rank %d", p.Name, p.Entities, p.Relations, p.Rank),
		fmt.Sprintf("- parameters: %s, seed %d; written to `planted.npz`", Distribution(m, p.Scale, p.Popularity), p.Seed)}
	if src.Shape != nil {
		src.Names = src.Shape.Names()
		var counts []string
		for _, t := range src.Shape.Types {
			counts = append(counts, fmt.Sprintf("%s %d", t.Name, t.Count))
		}
		src.About = append(src.About, fmt.Sprintf("- typed: under the domain constraint of `%s`'s %d relations, entity types from `%s` times %g (%s)",
			schema, p.Relations, types, typeScale, strings.Join(counts, ", ")))
	}
	return src, nil
}

// inDir returns path, taken relative to dir unless it is absolute.
func inDir(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}
