package analysis

// DefaultSamples is how many triples an analysis draws per run unless
// asked otherwise.
const DefaultSamples = 25000

// Run describes a finished run by the fields the analyses' tables show.
type Run struct {
	ID          string // the run's directory name under runs/
	Dataset     string // e.g. "umls"
	Model       string // registry name, e.g. "complex2"
	Objective   string // "pll" or "mle"
	Constraints string // "none" or "domain"
	Rank        int
	Seed        int
}

// DisplayModel names a model as tables do: a domain-constrained one gets
// the paper's "d-" prefix (d-complex2).
func DisplayModel(model, constraints string) string {
	if constraints == "domain" {
		return "d-" + model
	}
	return model
}
