package ckpt

import (
	"archive/zip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"
	"unsafe"

	"gekc/graph"
	"gekc/train"

	"github.com/sbinet/npyio/npy"
	"gorgonia.org/tensor"
)

// StateName is the name of an unfinished run's resume state in its run
// directory.
const StateName = "state.npz"

// stateMeta is the JSON part of a resume state.
type stateMeta struct {
	// RunID guards against a state copied into another run's directory.
	RunID       string    `json:"run_id"`
	Epoch       int       `json:"epoch"`
	Steps       int       `json:"steps"`
	StepSeconds jsonFloat `json:"step_seconds"`
	Best        jsonFloat `json:"best"`
	BestEpoch   int       `json:"best_epoch"`
	Since       int       `json:"since"`
	// LL is train.State.LL; absent in states written before runs tracked
	// the best validation log-likelihood.
	LL      *stateLL             `json:"ll,omitempty"`
	Epochs  []train.EpochRecord  `json:"epochs"`
	Initial map[string]jsonFloat `json:"initial,omitempty"`
	Notes   []string             `json:"notes,omitempty"`
	Dtype   string               `json:"dtype"`
	Shapes  map[string][]int     `json:"shapes"`
	// WallSeconds is the run's wall time up to the save, over every
	// attempt; SavedAt is when the state was written.
	WallSeconds jsonFloat `json:"wall_seconds"`
	SavedAt     time.Time `json:"saved_at"`
	// Batch is the number of steps of epoch Epoch+1 taken when a stopped
	// run saved its state mid-epoch (0: at the epoch's end); EpochLoss and
	// EpochSeconds are their loss sum and training time (train.State).
	Batch        int       `json:"batch,omitempty"`
	EpochLoss    jsonFloat `json:"epoch_loss,omitempty"`
	EpochSeconds jsonFloat `json:"epoch_seconds,omitempty"`
	// Segments are the processes that trained the run so far, the one
	// that wrote the state last; absent in states written before runs
	// kept them.
	Segments []Segment `json:"segments,omitempty"`
}

// A Segment is one process's share of a run's training: a run that
// resumes from its state trains in several, perhaps on other hosts or
// with other BLAS kernels, and its times mean something only beside each
// one's machine.
type Segment struct {
	Host string `json:"host"`
	// CPU is the processor's model name and logical CPU count.
	CPU        string `json:"cpu,omitempty"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// BLASThreads and SgemmGFLOPS are the process's matrix-product
	// threads and float32 rate on them (graph.BLASThreads, SgemmRate).
	BLASThreads int     `json:"blas_threads,omitempty"`
	SgemmGFLOPS float64 `json:"sgemm_gflops,omitempty"`
	// Env holds the environment variables that change speed or numerics,
	// as set ("" when unset).
	Env     map[string]string `json:"env,omitempty"`
	Started time.Time         `json:"started_at,omitzero"` // zero when unknown
	// WallSeconds is the segment's wall time, start to its last save (or
	// the run's end).
	WallSeconds float64 `json:"wall_seconds"`
	// From and To are where the segment took the run up and left it:
	// epochs completed and steps into the next (train.ResumePoint).
	FromEpoch int `json:"from_epoch"`
	FromBatch int `json:"from_batch,omitempty"`
	ToEpoch   int `json:"to_epoch"`
	ToBatch   int `json:"to_batch,omitempty"`
}

// stateLL is train.LLTrack with JSON-safe floats (Best is −Inf and Test
// NaN until the first validation).
type stateLL struct {
	Best  jsonFloat `json:"best"`
	Epoch int       `json:"epoch"`
	Since int       `json:"since"`
	Test  jsonFloat `json:"test"`
}

// maxSlots bounds the optimiser states a state file may hold (Adam has
// two): a hostile file cannot make the reader load tables without end.
const maxSlots = 4

// bestLLGroup names the arrays of train.State.BestLLParams. No optimiser
// slot is so named (graph's are adam_m, adam_v, adagrad_sum, sgd_momentum).
const bestLLGroup = "best_ll"

func tablesOf(s *train.State, group string) map[string]*tensor.Dense {
	switch group {
	case "param":
		return s.Params
	case "best":
		return s.BestParams
	case bestLLGroup:
		if s.BestLLParams == nil {
			s.BestLLParams = map[string]*tensor.Dense{}
		}
		return s.BestLLParams
	}
	if s.Slots[group] == nil {
		s.Slots[group] = map[string]*tensor.Dense{}
	}
	return s.Slots[group]
}

// StateInfo is what a resume state says about itself besides its tensors.
type StateInfo struct {
	// RunID is the run the state was written for.
	RunID string
	// Epoch is the number of epochs completed; Batch the number of steps
	// of epoch Epoch+1 taken when the run was stopped mid-epoch (0 at an
	// epoch's end); Steps the number of optimiser steps in all.
	Epoch, Batch, Steps int
	// Best is the best validation value of the run's selection metric so
	// far and BestEpoch its epoch (-1 before the first validation).
	Best      float64
	BestEpoch int
	// Wall is the run's wall time up to the save, over every attempt.
	Wall time.Duration
	// SavedAt is when the state was written.
	SavedAt time.Time
	// Segments are the processes that trained the run up to the save
	// (nil for a state written before runs kept them).
	Segments []Segment
}

// ResumePoint says where a run resumed from the state goes on
// (train.ResumePoint).
func (i *StateInfo) ResumePoint() string { return train.ResumePoint(i.Epoch, i.Batch) }

func (m *stateMeta) info() *StateInfo {
	return &StateInfo{RunID: m.RunID, Epoch: m.Epoch, Batch: m.Batch, Steps: m.Steps,
		Best: float64(m.Best), BestEpoch: m.BestEpoch,
		Wall: train.Seconds(float64(m.WallSeconds)), SavedAt: m.SavedAt, Segments: m.Segments}
}

// WriteState writes s, the state of run runID after wall time wall,
// atomically to path.
//
// A resume state, runs/<id>/state.npz, is what an unfinished run continues
// from when the sweep is started again: a NumPy archive of the current and
// best parameters and the optimiser's state (arrays "param.<table>",
// "best.<table>" and "<slot>.<table>", flattened, a slot being e.g. Adam's
// "adam_m" and "adam_v" or Adagrad's "adagrad_sum"; "best_ll.<table>" for
// a run that keeps the parameters of its best validation log-likelihood)
// and of
// "meta", the UTF-8 JSON of everything else (counters, epoch records,
// notes, dtype and shapes). The command writes it at most every
// -state-every, after an epoch or inside a long one; at once, mid-epoch, when the run is told to stop
// (SIGINT, SIGTERM, SIGUSR1); and removes it once the run's metrics.json is
// final. Entries are stored uncompressed: the state of a WN18RR run at
// d=200 is ~260 MB and is written in a second. wall is the run's wall
// time over every attempt, segments the processes that trained it so far
// (nil when the caller keeps no account of them).
func WriteState(path, runID string, s *train.State, wall time.Duration, segments []Segment) error {
	meta := stateMeta{RunID: runID, Epoch: s.Epoch, Steps: s.Steps, StepSeconds: jsonFloat(s.StepSeconds),
		Best: jsonFloat(s.Best), BestEpoch: s.BestEpoch, Since: s.Since, Initial: toJSONMap(s.Initial), Notes: s.Notes,
		Shapes: map[string][]int{}, WallSeconds: jsonFloat(wall.Seconds()), SavedAt: time.Now().UTC(),
		Batch: s.Batch, EpochLoss: jsonFloat(s.EpochLoss), EpochSeconds: jsonFloat(s.EpochSeconds), Segments: segments}
	if l := s.LL; l != nil {
		meta.LL = &stateLL{Best: jsonFloat(l.Best), Epoch: l.Epoch, Since: l.Since, Test: jsonFloat(l.Test)}
	}
	meta.Epochs = s.Epochs
	for n, p := range s.Params {
		meta.Shapes[n] = []int(p.Shape().Clone())
		meta.Dtype = p.Dtype().Name()
		if s.Part != nil && slices.Contains(s.Part.Tables, n) {
			meta.Shapes[n][0] = s.Part.N
		}
	}
	js, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	// npy writes element by element; the zip entry checksums each write.
	entries := []archiveEntry{{name: "meta.npy", label: "meta", write: func(w io.Writer) error { return npy.Write(w, js) }}}
	for _, e := range s.Entries() {
		a := archiveEntry{name: e.Group + "." + e.Table + ".npy", label: e.Group + "." + e.Table,
			write: func(w io.Writer) error { return npy.Write(w, e.T.Data()) }}
		if e.Cut {
			a.write = func(w io.Writer) error { return writeGathered(w, s, e) }
			a.drain = func() error { return s.GatherRows(e, nil) }
		}
		entries = append(entries, a)
	}
	return writeArchive(path, entries, 1<<16)
}

// writeGathered writes a cut entry of a sharded state as the flattened
// whole table, a chunk of rows gathered from every process at a time; on
// a failed write the gathers go on to the entry's end.
func writeGathered(w io.Writer, s *train.State, e train.StateEntry) error {
	descr := "<f4"
	if e.T.Dtype() == tensor.Float64 {
		descr = "<f8"
	}
	if err := writeNpyHeaderOf(w, descr, fmt.Sprintf("(%d,)", s.Part.N*e.T.Shape()[1])); err != nil {
		_ = s.GatherRows(e, nil)
		return err
	}
	return s.GatherRows(e, func(rows any) error { return binary.Write(w, binary.LittleEndian, rows) })
}

// ErrNoState is returned by ReadState and ReadStateInfo when there is no
// state file: the run has not saved one.
var ErrNoState = errors.New("no resume state")

// ReadStateInfo reads only what a state says about itself, not its tensors:
// cheap enough to tell where each run of a sweep would resume.
func ReadStateInfo(path string) (*StateInfo, error) {
	z, err := zip.OpenReader(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoState
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer z.Close()
	meta, err := decodeStateMeta(path, &z.Reader)
	if err != nil {
		return nil, err
	}
	return meta.info(), nil
}

func decodeStateMeta(path string, z *zip.Reader) (*stateMeta, error) {
	var js []uint8
	if err := readNpyEntry(z, "meta.npy", &js, 1, maxMetaBytes); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var meta stateMeta
	if err := json.Unmarshal(js, &meta); err != nil {
		return nil, fmt.Errorf("%s: meta: %w", path, err)
	}
	return &meta, nil
}

// ReadState reads the state at path written for run runID, for
// train.Config.Resume; ErrNoState when there is none. A state of another
// run, or one that is corrupt, is an error naming the file; whether its
// tensors fit the model is train.Run's to check (train.ErrStateMismatch).
func ReadState(path, runID string) (*train.State, *StateInfo, error) {
	return readState(path, runID, nil)
}

// ReadStateRows is ReadState keeping of each table in rows only rows
// [lo, hi): the part of a state (of any process count, one included)
// that one process of a sharded run holds. Rows are read one entry at a
// time, so a process never holds more than its part.
func ReadStateRows(path, runID string, rows []string, lo, hi int) (*train.State, *StateInfo, error) {
	return readState(path, runID, func(table string) (int, int, bool) {
		return lo, hi, slices.Contains(rows, table)
	})
}

// readState reads a state, of each table for which cut says so only the
// rows it returns.
func readState(path, runID string, cut func(table string) (lo, hi int, ok bool)) (*train.State, *StateInfo, error) {
	z, err := zip.OpenReader(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, ErrNoState
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	defer z.Close()
	meta, err := decodeStateMeta(path, &z.Reader)
	if err != nil {
		return nil, nil, err
	}
	if meta.RunID != runID {
		return nil, nil, fmt.Errorf("%s: the state of run %q, not of %q", path, meta.RunID, runID)
	}
	s := &train.State{Epoch: meta.Epoch, Steps: meta.Steps, StepSeconds: float64(meta.StepSeconds), Best: float64(meta.Best),
		BestEpoch: meta.BestEpoch, Since: meta.Since, Notes: meta.Notes,
		Batch: meta.Batch, EpochLoss: float64(meta.EpochLoss), EpochSeconds: float64(meta.EpochSeconds),
		Params: map[string]*tensor.Dense{}, BestParams: map[string]*tensor.Dense{}, Slots: map[string]map[string]*tensor.Dense{}}
	if meta.Initial != nil {
		s.Initial = fromJSONMap(meta.Initial)
	}
	if l := meta.LL; l != nil {
		s.LL = &train.LLTrack{Best: float64(l.Best), Epoch: l.Epoch, Since: l.Since, Test: float64(l.Test)}
	}
	s.Epochs = meta.Epochs
	// Every entry but meta is "<group>.<table>.npy" for a table of meta's
	// shapes; an optimiser's slots are absent before its first step, and
	// train.Run checks that the groups found fit the run.
	seen := map[string]bool{}
	for _, f := range z.File {
		if f.Name == "meta.npy" {
			continue
		}
		if seen[f.Name] {
			return nil, nil, fmt.Errorf("%s: entry %s appears twice", path, f.Name)
		}
		seen[f.Name] = true
		group, n, shape := "", "", []int(nil)
		for table, sh := range meta.Shapes {
			if g, ok := strings.CutSuffix(f.Name, "."+table+".npy"); ok && g != "" && len(table) > len(n) {
				group, n, shape = g, table, sh
			}
		}
		if group == "" {
			return nil, nil, fmt.Errorf("%s: entry %s is of no table of the state (%v)", path, f.Name, slices.Sorted(maps.Keys(meta.Shapes)))
		}
		if _, known := s.Slots[group]; !known && group != "param" && group != "best" && group != bestLLGroup && len(s.Slots) >= maxSlots {
			return nil, nil, fmt.Errorf("%s: entry %s: more than %d optimiser states", path, f.Name, maxSlots)
		}
		lo, hi := 0, 0
		if cut != nil {
			var ok bool
			if lo, hi, ok = cut(n); !ok {
				lo, hi = 0, 0
			} else if len(shape) != 2 || lo < 0 || hi > shape[0] || lo >= hi {
				return nil, nil, fmt.Errorf("%s: rows [%d, %d) of %s, of shape %v", path, lo, hi, n, shape)
			}
		}
		var t *tensor.Dense
		switch meta.Dtype {
		case tensor.Float32.Name():
			t, err = readTensor[float32](&z.Reader, f.Name, shape, lo, hi)
		case tensor.Float64.Name():
			t, err = readTensor[float64](&z.Reader, f.Name, shape, lo, hi)
		default:
			err = fmt.Errorf("dtype %q", meta.Dtype)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		tablesOf(s, group)[n] = t
	}
	return s, meta.info(), nil
}

// readTensor reads one flattened array of a state as a tensor of shape,
// or, when lo < hi, rows [lo, hi) of it.
func readTensor[T float32 | float64](z *zip.Reader, name string, shape []int, lo, hi int) (*tensor.Dense, error) {
	size := int(unsafe.Sizeof(T(0)))
	n, ok := elements(shape, maxStateBytes/size)
	if !ok || len(shape) == 0 || n == 0 {
		return nil, fmt.Errorf("entry %s: shape %v", name, shape)
	}
	// Stored flattened; decoded in chunks straight into the tensor, which
	// is allocated only once the entry's size has shown that meta's shape
	// is not a lie (a corrupt shape must be an error, not an allocation
	// that kills the process).
	if lo < hi {
		return readTensorRows[T](z, name, shape, n, lo, hi)
	}
	var v []T
	if err := readArrayInto(z, name, []int{n}, func() any { v = make([]T, n); return v }); err != nil {
		return nil, err
	}
	t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	graph.FlushSubnormals(t)
	return t, nil
}

// readTensorRows reads rows [lo, hi) of a flattened matrix of shape
// (n values) as a tensor of hi−lo rows, streaming past the others.
func readTensorRows[T float32 | float64](z *zip.Reader, name string, shape []int, n, lo, hi int) (*tensor.Dense, error) {
	cols := shape[1]
	var v []T
	err := readArrayWith(z, name, []int{n}, func(int) (func(i int, x float64), error) {
		v = make([]T, (hi-lo)*cols)
		return func(i int, x float64) {
			if r := i / cols; r >= lo && r < hi {
				v[i-lo*cols] = T(x)
			}
		}, nil
	})
	if err != nil {
		return nil, err
	}
	t := tensor.New(tensor.WithShape(hi-lo, cols), tensor.WithBacking(v))
	graph.FlushSubnormals(t)
	return t, nil
}
