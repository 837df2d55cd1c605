package resultsdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"gekc/dist"
	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/internal/jsonfloat"
	"gekc/kg"
	"gekc/train"
	"gekc/train/ckpt"
)

// Record is metrics.json: the Outcome plus what is needed to trust and
// reproduce it. It is written last, atomically: a run is finished exactly
// when its metrics.json says finished or diverged.
type Record struct {
	ID              string               `json:"id"`
	ConfigID        string               `json:"config_id"` // the ID without the seed
	Status          train.Status         `json:"status"`
	Error           string               `json:"error,omitempty"`
	Spec            grid.RunSpec         `json:"spec"`
	Epochs          []train.EpochRecord  `json:"epochs"`
	BestEpoch       int                  `json:"best_epoch"`
	LLEpoch         *int                 `json:"ll_epoch,omitempty"` // Outcome.LLEpoch; absent in records from before it
	Valid           map[string]jsonFloat `json:"valid"`
	Test            map[string]jsonFloat `json:"test"`
	WallSeconds     jsonFloat            `json:"wall_seconds"`
	SecondsPerEpoch jsonFloat            `json:"seconds_per_epoch"`
	PeakRSSBytes    int64                `json:"peak_rss_bytes"` // 0 = unknown
	// Memory is what the run held, part by part (parameters, gradients,
	// optimiser, step and evaluation buffers, data and filter), against
	// its budget; Data the data set's sizes and load time.
	Memory     *Memory   `json:"memory,omitempty"`
	Data       *Data     `json:"data,omitempty"`
	Notes      []string  `json:"notes,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Host       string    `json:"host"`
	GoVersion  string    `json:"go_version"`
	GOMAXPROCS int       `json:"gomaxprocs"` // runtime.GOMAXPROCS(0) during the run
	// CPU is the processor's model name and logical CPU count: times of
	// runs made on different machines are not comparable.
	CPU string `json:"cpu,omitempty"`
	// SgemmGFLOPS is the host's float32 matrix-product rate with the
	// process's BLAS threads (graph.SgemmRate), measured once per process:
	// the yardstick for comparing the run's times with other hosts'.
	SgemmGFLOPS jsonFloat `json:"sgemm_gflops,omitempty"`
	// BLASThreads is the number of threads matrix products computed on
	// (graph.BLASThreads): with OpenBLAS, GOMAXPROCS unless
	// OPENBLAS_NUM_THREADS says otherwise. Records from before it have 0.
	BLASThreads int `json:"blas_threads,omitempty"`
	// Env holds the environment variables that change speed or numerics,
	// as set ("" when unset).
	Env map[string]string `json:"env"`
	// Segments are the processes that trained a run resumed from its
	// state, in order (Outcome.Segments); absent when one process trained
	// it all, whose host, rate and environment are those above. Host
	// through Env are always the last process's.
	Segments []ckpt.Segment `json:"segments,omitempty"`
	// Processes is each process's account of a run sharded over several
	// (its peak RSS, step time, share of it in collectives, bytes sent per
	// step); absent for one process.
	Processes []dist.ProcessStats `json:"processes,omitempty"`
	PID       int                 `json:"pid"`
	Command   []string            `json:"command"`
	Grid      string              `json:"grid"`
	// Rung is the successive-halving rung the record ends (grid [search]);
	// absent for a grid without one. Earlier rungs' records are kept as
	// rung-<k>.json beside it (k counted from 1).
	Rung *RungMark `json:"rung,omitempty"`
}

// jsonFloat survives NaN and ±Inf in JSON (see internal/jsonfloat).
type jsonFloat = jsonfloat.Float

// WriteRecord writes rec as the run record (metrics.json) at path,
// atomically, as the sweep does.
func WriteRecord(path string, rec *Record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadRecord reads the record of the run in runDir (its metrics.json); it
// returns nil and no error when the run has none yet.
func ReadRecord(runDir string) (*Record, error) {
	return ReadRecordFile(filepath.Join(runDir, MetricsName))
}

// ReadRecordFile returns the record at path, or nil if there is none.
func ReadRecordFile(path string) (*Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return &rec, nil
}

// Memory is a run's memory in metrics.json, in bytes: the parts the run
// held (train.Memory) beside the process's peak.
type Memory struct {
	train.Memory
	Total  int64 `json:"total"`
	Budget int64 `json:"budget,omitempty"`
}

// Data is the data set's sizes in metrics.json.
type Data struct {
	Entities  int `json:"entities"`
	Relations int `json:"relations"`
	Train     int `json:"train"`
	Valid     int `json:"valid"`
	Test      int `json:"test"`
	// LoadSeconds is the time the process took to read the data set, once
	// for all its runs (a resumed sweep reads it again).
	LoadSeconds    float64 `json:"load_seconds,omitempty"`
	BytesPerTriple float64 `json:"bytes_per_triple"`
	// Synthetic says the data set was sampled from a model (kg.Dataset.Synthetic).
	Synthetic bool `json:"synthetic,omitempty"`
}

// DataOf returns the sizes of a data set for a run's record, with the time
// LoadDataset took to read it.
func DataOf(ds *kg.Dataset) *Data {
	d := &Data{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(),
		Train: len(ds.Train), Valid: len(ds.Valid), Test: len(ds.Test), Synthetic: ds.Synthetic}
	if n := d.Train + d.Valid + d.Test; n > 0 {
		d.BytesPerTriple = float64(ds.Bytes()) / float64(n)
	}
	if s, ok := loadTimes.Load(ds); ok {
		d.LoadSeconds = s.(float64)
	}
	return d
}

// RungMark says which rung of a successive-halving search (grid [search])
// a record ends.
type RungMark struct {
	Index  int `json:"index"`  // 0 is the first rung
	Of     int `json:"of"`     // the search's number of rungs
	Epochs int `json:"epochs"` // the rung's budget
}

// Last says whether the rung is the search's last.
func (m *RungMark) Last() bool { return m.Index == m.Of-1 }

// String is the rung as results.md shows it, counted from 1: "2/4".
func (m *RungMark) String() string { return fmt.Sprintf("%d/%d", m.Index+1, m.Of) }
