package analysis

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gekc/metrics"
	"gekc/report"
)

// KTDReferenceName is the file of published KTDs beside the paper's other
// values (report's paper-reference.tsv): results/paper-ktd-reference.tsv.
const KTDReferenceName = "paper-ktd-reference.tsv"

// KTDReference holds published KTDs (the paper's Table 3 with its spreads)
// by data set, model and objective ("" for a baseline), to set beside a KTD
// table's rows. Its ψ is the publication's: with another ψ only the order
// of the rows compares, not the values.
type KTDReference struct {
	rows map[[3]string]metrics.KTDStat
}

// Lookup returns the published KTD of a row (Std is the spread the source
// prints), and whether there is one.
func (ref *KTDReference) Lookup(dataset, model, objective string) (metrics.KTDStat, bool) {
	if ref == nil {
		return metrics.KTDStat{}, false
	}
	st, ok := ref.rows[[3]string{dataset, model, objective}]
	return st, ok
}

// covers says whether the reference has a value for any row of dataset.
func (ref *KTDReference) covers(dataset string) bool {
	if ref == nil {
		return false
	}
	for k := range ref.rows {
		if k[0] == dataset {
			return true
		}
	}
	return false
}

// ReadKTDReference reads a KTD reference: a tab-separated file whose
// header is dataset, model, objective, ktd, ktd_sd; lines starting with #
// are comments; a baseline's objective is "-" (a model's is never empty).
// Errors name the file and line.
func ReadKTDReference(path string) (*KTDReference, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ref := &KTDReference{rows: map[[3]string]metrics.KTDStat{}}
	header := false
	seen := map[[3]string]int{}
	for n, f := range report.CommentedTSVRecords(data) {
		if !header {
			if line := strings.Join(f, "\t"); line != "dataset\tmodel\tobjective\tktd\tktd_sd" {
				return nil, fmt.Errorf("%s:%d: header %q, want dataset, model, objective, ktd, ktd_sd", path, n, line)
			}
			header = true
			continue
		}
		if len(f) != 5 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 5", path, n, len(f))
		}
		key := [3]string{f[0], f[1], f[2]}
		if key[2] == "-" {
			key[2] = ""
		}
		if key[0] == "" || key[1] == "" || f[2] == "" || isBaseline(key[1]) != (key[2] == "") {
			return nil, fmt.Errorf("%s:%d: %q %q %q: want a data set, and a model with its objective or a baseline (training set, uniform, %s) with \"-\"", path, n, f[0], f[1], f[2], NNMFAugName)
		}
		if at, ok := seen[key]; ok {
			return nil, fmt.Errorf("%s:%d: %s %s %s is on line %d already", path, n, f[0], f[1], f[2], at)
		}
		seen[key] = n
		var st metrics.KTDStat
		for j, p := range []*float64{&st.Mean, &st.Std} {
			x, err := strconv.ParseFloat(f[3+j], 64)
			// An unbiased KTD may be below zero; its spread may not.
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || j == 1 && x < 0 {
				return nil, fmt.Errorf("%s:%d: %s: %q is not a %s", path, n, []string{"ktd", "ktd_sd"}[j], f[3+j], []string{"number", "non-negative number"}[j])
			}
			*p = x
		}
		ref.rows[key] = st
	}
	if !header {
		return nil, fmt.Errorf("%s: no header line", path)
	}
	return ref, nil
}
