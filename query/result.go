package query

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// A Result is an answer in names, ready to print: what was asked, what
// kind of probabilities the rows hold, and the rows. An Answerer fills
// every field but Run, which names where the model came from for the
// heading and is the caller's to set; Model is the model's registry name.
type Result struct {
	Run         string `json:"run"`
	Model       string `json:"model"`
	Constrained bool   `json:"constrained"` // answered under a domain constraint
	Query       string `json:"query"`       // the question, e.g. "(alga, isa, ?)"
	Kind        Kind   `json:"kind"`
	Filtered    bool   `json:"filtered,omitempty"` // known triples left out of completions
	Rows        []Row  `json:"rows"`
}

// A Kind says what a Result's probabilities are.
type Kind string

// The kinds of answers.
const (
	KindConditional Kind = "conditional" // a GeKC's exact conditional distribution
	KindSoftmax     Kind = "softmax"     // an energy-based model's softmax of its scores over the slot
	KindMarginal    Kind = "marginal"    // a GeKC's exact marginal distribution
	KindJoint       Kind = "joint"       // log p(s, r, o) and the three conditionals
	KindSample      Kind = "sample"      // exact samples
)

// A Row is one line of an answer. Fields that do not apply are nil or
// zero: omitted from JSON and left empty in tables.
type Row struct {
	Rank     int      `json:"rank,omitempty"` // 1-based; 0 for scored triples and samples
	Subject  string   `json:"subject,omitempty"`
	Relation string   `json:"relation,omitempty"`
	Object   string   `json:"object,omitempty"`
	Prob     *float64 `json:"p,omitempty"`
	LogProb  *float64 `json:"log_p,omitempty"`
	Known    *bool    `json:"known,omitempty"` // in the dataset's train, valid or test split
	// The three conditionals of a scored triple: log p(s | r, o),
	// log p(r | s, o), log p(o | s, r).
	LogPSubject  *float64 `json:"log_p_subject,omitempty"`
	LogPRelation *float64 `json:"log_p_relation,omitempty"`
	LogPObject   *float64 `json:"log_p_object,omitempty"`
}

func fptr(x float64) *float64 { return &x }

// Write prints r in format "text" (a heading of # lines, then aligned
// columns), "tsv" (a header line, then tab-separated rows) or "json" (one
// indented object; −Inf log-probabilities, which JSON lacks, as "-Inf").
// Tables have a column for each field that some row holds, in Row's order
// but with known last; numbers have 8 significant digits.
func (r *Result) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(jsonSafe(r))
	case "text", "tsv":
	default:
		return fmt.Errorf("query: format %q: want text, tsv or json", format)
	}
	cols := r.columns()
	if format == "text" {
		constrained := ""
		if r.Constrained {
			constrained = ", domain-constrained"
		}
		fmt.Fprintf(w, "# run %s (%s%s)\n# %s: %s\n", r.Run, r.Model, constrained, r.Kind, r.Query)
		if r.Kind == KindSoftmax {
			fmt.Fprintln(w, "# energy-based model: p is the softmax of its scores over the free slot, not a GeKC's exact conditional")
		}
		if r.Filtered {
			fmt.Fprintln(w, "# filtered: known triples (train, valid, test) left out; p is still the model's")
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
		for _, row := range r.Rows {
			fmt.Fprintln(tw, strings.Join(row.cells(cols), "\t"))
		}
		return tw.Flush()
	}
	fmt.Fprintln(w, strings.Join(cols, "\t"))
	for _, row := range r.Rows {
		fmt.Fprintln(w, strings.Join(row.cells(cols), "\t"))
	}
	return nil
}

// columns are the fields any row has, in a fixed order.
func (r *Result) columns() []string {
	all := []string{"rank", "subject", "relation", "object", "p", "log_p", "log_p_subject", "log_p_relation", "log_p_object", "known"}
	var cols []string
	for _, c := range all {
		for _, row := range r.Rows {
			if row.cells([]string{c})[0] != "" {
				cols = append(cols, c)
				break
			}
		}
	}
	return cols
}

func (row Row) cells(cols []string) []string {
	num := func(x *float64) string {
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'g', 8, 64)
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		switch c {
		case "rank":
			if row.Rank > 0 {
				out[i] = strconv.Itoa(row.Rank)
			}
		case "subject":
			out[i] = row.Subject
		case "relation":
			out[i] = row.Relation
		case "object":
			out[i] = row.Object
		case "p":
			out[i] = num(row.Prob)
		case "log_p":
			out[i] = num(row.LogProb)
		case "log_p_subject":
			out[i] = num(row.LogPSubject)
		case "log_p_relation":
			out[i] = num(row.LogPRelation)
		case "log_p_object":
			out[i] = num(row.LogPObject)
		case "known":
			if row.Known != nil {
				out[i] = strconv.FormatBool(*row.Known)
			}
		}
	}
	return out
}

// jsonSafe replaces −Inf log-probabilities (no mass under a constraint),
// which encoding/json refuses, by nil-able strings.
func jsonSafe(r *Result) any {
	type row struct {
		Row
		LogProb      any `json:"log_p,omitempty"`
		LogPSubject  any `json:"log_p_subject,omitempty"`
		LogPRelation any `json:"log_p_relation,omitempty"`
		LogPObject   any `json:"log_p_object,omitempty"`
	}
	conv := func(x *float64) any {
		switch {
		case x == nil:
			return nil
		case math.IsInf(*x, -1):
			return "-Inf"
		}
		return *x
	}
	rows := make([]row, len(r.Rows))
	for i, x := range r.Rows {
		rows[i] = row{Row: x, LogProb: conv(x.LogProb), LogPSubject: conv(x.LogPSubject),
			LogPRelation: conv(x.LogPRelation), LogPObject: conv(x.LogPObject)}
	}
	return struct {
		Result
		Rows []row `json:"rows"`
	}{*r, rows}
}
