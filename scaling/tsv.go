package scaling

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"gekc/report"
)

// The outcomes of a point; a failure other than these is StatusError, a
// colon and its first line.
const (
	StatusOK      = "ok"
	StatusOOM     = "oom"     // its resident memory passed the cap, or the kernel's
	StatusTimeout = "timeout" // it took longer than Options.Timeout
	StatusError   = "error"
)

// A Row is a point with its outcome: a line of scaling.tsv.
type Row struct {
	Point
	StepMS    float64 // median over the timed steps; NaN unless ok
	PeakRSSMB float64 // NaN if unknown
	Status    string  // StatusOK, StatusOOM, StatusTimeout or "error: <first line>"
	MaxMemMB  float64 // the cap it was measured under; 0: none
	Coretype  string  // $OPENBLAS_CORETYPE
	Procs     int     // GOMAXPROCS of the child
}

// OK reports whether the point was measured.
func (r Row) OK() bool { return r.Status == StatusOK }

var columns = []string{"study", "model", "entities", "relations", "rank", "batch", "step_ms", "peak_rss_mb",
	"status", "max_mem_mb", "openblas_coretype", "gomaxprocs"}

// EncodeTSV writes rows as scaling.tsv: a header line, then a line per row
// with unknown figures empty and tabs and line breaks in text turned into
// spaces.
func EncodeTSV(rows []Row) []byte {
	var b bytes.Buffer
	b.WriteString(strings.Join(columns, "\t"))
	b.WriteByte('\n')
	num := func(x float64, prec int) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', prec, 64)
	}
	for _, r := range rows {
		fields := []string{r.Study, r.Model, strconv.Itoa(r.Entities), strconv.Itoa(r.Relations), strconv.Itoa(r.Rank),
			strconv.Itoa(r.Batch), num(r.StepMS, 3), num(r.PeakRSSMB, 1), r.Status, num(r.MaxMemMB, 0), r.Coretype,
			strconv.Itoa(r.Procs)}
		for i := range fields {
			fields[i] = report.TSVCell(fields[i])
		}
		b.WriteString(strings.Join(fields, "\t"))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ReadTSV reads the rows of the scaling.tsv at path; none if it does not
// exist.
func ReadTSV(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseTSV(path, data)
}

// ParseTSV reads the rows of scaling.tsv from data; errors name the file
// as name and the line. Columns are found by name, so that rows survive a
// change of column order.
func ParseTSV(name string, data []byte) ([]Row, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return nil, nil
	}
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "\t") {
		col[h] = i
	}
	for _, c := range []string{"study", "model", "entities", "relations", "rank", "batch", "status"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s:1: no %s column", name, c)
		}
	}
	var rows []Row
	for n, line := range lines[1:] {
		if line == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(fields) {
				return fields[i]
			}
			return ""
		}
		bad := func(c string) error {
			return fmt.Errorf("%s:%d: bad %s %q", name, n+2, c, get(c))
		}
		r := Row{Point: Point{Study: get("study"), Model: get("model")}, Status: get("status"),
			Coretype: get("openblas_coretype")}
		for _, f := range []struct {
			c   string
			dst *int
		}{{"entities", &r.Entities}, {"relations", &r.Relations}, {"rank", &r.Rank}, {"batch", &r.Batch}} {
			v, err := strconv.Atoi(get(f.c))
			if err != nil || v <= 0 {
				return nil, bad(f.c)
			}
			*f.dst = v
		}
		for _, f := range []struct {
			c   string
			dst *float64
		}{{"step_ms", &r.StepMS}, {"peak_rss_mb", &r.PeakRSSMB}, {"max_mem_mb", &r.MaxMemMB}} {
			*f.dst = math.NaN()
			if s := get(f.c); s != "" {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, bad(f.c)
				}
				*f.dst = v
			}
		}
		if math.IsNaN(r.MaxMemMB) {
			r.MaxMemMB = 0
		}
		if s := get("gomaxprocs"); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil {
				return nil, bad("gomaxprocs")
			}
			r.Procs = v
		}
		switch {
		case r.Study != StudyBatch && r.Study != StudyEntities:
			return nil, bad("study")
		case r.Model == "":
			return nil, bad("model")
		case r.Status == "":
			return nil, bad("status")
		case r.OK() && !(r.StepMS > 0):
			return nil, bad("step_ms")
		}
		rows = append(rows, r)
	}
	return rows, nil
}
