package analysis

import (
	"errors"
	"fmt"
	"io"

	"flag"
	"gekc/metrics"
	"gekc/models"
	"gekc/query"
	"gekc/resultsdir"
)

// DiagOptions are what the diagnostics of one run (Diagnose) take.
type DiagOptions struct {
	Features string // directory of the finished ComplEx run giving ψ; "": none
	DataRoot string // where ψ's data set is
	Samples  int    // refit-relations, uniform-components: samples drawn for the KTD
	Pairs    int    // refit-relations: training pairs p(r | s, o) is averaged over (0: none)
}

// Flags defines the diag verb's flags of o on fs: -features (a run as
// named, for the command to find), -samples and -pairs.
func (o *DiagOptions) Flags(fs *flag.FlagSet) {
	fs.StringVar(&o.Features, "features", "", "refit-relations, uniform-components: finished ComplEx `run` giving ψ (directory or ID)")
	fs.IntVar(&o.Samples, "samples", 25000, "refit-relations, uniform-components: samples drawn for the KTD")
	fs.IntVar(&o.Pairs, "pairs", 3000, "refit-relations: training pairs drawn to average p(r | s, o) over (0: none)")
}

// DiagnosticNames lists the diagnostics, for messages.
const DiagnosticNames = "ll-by-seen, refit-relations or uniform-components"

// diagnostics are Diagnose's by name.
var diagnostics = map[string]func(w io.Writer, fr *resultsdir.Finished, o DiagOptions) error{
	"ll-by-seen": diagLLBySeen, "refit-relations": diagRefitRelations, "uniform-components": diagUniformComponents,
}

// IsDiagnostic says whether name is one of DiagnosticNames.
func IsDiagnostic(name string) bool { return diagnostics[name] != nil }

// Diagnose prints the diagnostic name of the finished run fr to w:
//
//	ll-by-seen          LLBySeen at the run's selected parameters
//	refit-relations     Refit (with the KTD when o.Features is set) at the
//	                    parameters the run's samples come from
//	uniform-components  UniformComponents at those parameters (needs o.Features)
func Diagnose(name string, w io.Writer, fr *resultsdir.Finished, o DiagOptions) error {
	diag := diagnostics[name]
	if diag == nil {
		return fmt.Errorf("diag %q: want %s", name, DiagnosticNames)
	}
	return diag(w, fr, o)
}

// diagLLBySeen prints LLBySeen of the run's selected parameters.
func diagLLBySeen(w io.Writer, fr *resultsdir.Finished, _ DiagOptions) error {
	dom, err := fr.Constraint()
	if err != nil {
		return err
	}
	q, err := query.New(fr.Model, dom, fr.Spec.Eval.BatchSize)
	if err != nil {
		return err
	}
	s, err := LLBySeen(fr.Model, fr.Data, q, q.LogPartition)
	if err != nil {
		return fmt.Errorf("%s: %w", fr.ID, err)
	}
	s.Write(w, fr.ID)
	return nil
}

// diagRefitRelations runs a Refit at the run's sampled parameters.
func diagRefitRelations(w io.Writer, fr *resultsdir.Finished, o DiagOptions) error {
	if fr.Model.Semantics != models.Squared {
		return fmt.Errorf("%s is %s, not a squared GeKC", fr.ID, fr.Spec.Model)
	}
	if err := fr.LoadSampledParameters(); err != nil {
		return err
	}
	dom, err := fr.Constraint()
	if err != nil {
		return err
	}
	rf := &Refit{ID: fr.ID, Model: fr.Model, Domain: dom, Data: fr.Data, Batch: fr.Spec.Eval.BatchSize,
		Pairs: o.Pairs, Seed: uint64(fr.Spec.Seed), Samples: o.Samples}
	if o.Features != "" {
		if rf.Features, err = diagFeatures(o.Features, o.DataRoot); err != nil {
			return err
		}
	}
	return rf.Run(w)
}

// diagUniformComponents runs UniformComponents at the run's sampled
// parameters.
func diagUniformComponents(w io.Writer, fr *resultsdir.Finished, o DiagOptions) error {
	if o.Features == "" {
		return errors.New("-features is required: the finished ComplEx run giving ψ")
	}
	if err := fr.LoadSampledParameters(); err != nil {
		return err
	}
	psi, err := diagFeatures(o.Features, o.DataRoot)
	if err != nil {
		return err
	}
	return UniformComponents(w, fr.ID, fr.Model, fr.Data, psi, o.Samples, uint64(fr.Spec.Seed))
}

// diagFeatures is ψ of the finished run in dir: its model's product units.
func diagFeatures(dir, dataRoot string) (metrics.TripleFeatures, error) {
	ref, err := resultsdir.LoadFinished(dir, dataRoot)
	if err != nil {
		return nil, err
	}
	return metrics.ProductUnitFeatures(ref.Model)
}
