package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gekc/grid"
	"gekc/internal/filelock"
	"gekc/resultsdir"
	"gekc/train/ckpt"
)

// AdoptState gives run r of the sweep in out the resume state src of
// another run whose spec differs from r's only in when it stops: a patience
// or an epoch bound at least as large. Neither key changes a step of
// training before the stop, and training is deterministic, so the state is
// exactly where a run of r's spec would have been at that point, and r
// trains on from it as if it had started from scratch: a run that stopped
// too early for its patience is continued under a larger one without
// repeating the epochs it trained (the state must have been copied before
// the run finished, which removes it).
//
// The spec of the run that wrote src is that of the run of the same ID
// among runs (the grid's), or else the config.toml beside src (a run
// directory holds one while its run trains). r must not be finished nor
// have a state of its own. The note returned, also kept in the run's
// record, names the run continued and the keys that differ.
func AdoptState(out string, runs []grid.Run, r grid.Run, src string) (string, error) {
	info, err := ckpt.ReadStateInfo(src)
	if err != nil {
		return "", fmt.Errorf("adopting %s: %w", src, err)
	}
	from, found := grid.RunSpec{}, false
	for _, g := range runs {
		if g.ID == info.RunID {
			from, found = g.Spec, true
			break
		}
	}
	if !found {
		cfgPath := filepath.Join(filepath.Dir(src), resultsdir.ConfigName)
		if from, err = resultsdir.ReadConfig(cfgPath); err != nil {
			return "", fmt.Errorf("adopting %s, the state of run %s: that run is not in the grid, and %w", src, info.RunID, err)
		}
		if id := from.ID(); id != info.RunID {
			return "", fmt.Errorf("adopting %s: the state of run %s beside the config.toml of run %s", src, info.RunID, id)
		}
	}
	if err := stopsOnlyLater(from, r.Spec); err != nil {
		return "", fmt.Errorf("run %s cannot adopt the state of run %s: %w", r.ID, info.RunID, err)
	}
	if info.Epoch >= r.Spec.Epochs {
		return "", fmt.Errorf("run %s cannot adopt the state of run %s: it has trained %d epochs, and epochs = %d", r.ID, info.RunID, info.Epoch, r.Spec.Epochs)
	}

	dir := filepath.Join(out, resultsdir.RunsDirName, r.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := filelock.TryLock(filepath.Join(dir, resultsdir.RunLockName))
	if errors.Is(err, filelock.ErrLocked) {
		return "", fmt.Errorf("run %s is being trained by another process", r.ID)
	}
	if err != nil {
		return "", err
	}
	defer lock.Unlock()
	if prev, err := resultsdir.ReadRecord(dir); err == nil && prev != nil && final(prev.Status) {
		return "", fmt.Errorf("run %s is %s already (%s)", r.ID, prev.Status, filepath.Join(dir, resultsdir.MetricsName))
	}
	dst := filepath.Join(dir, ckpt.StateName)
	if own, err := ckpt.ReadStateInfo(dst); err == nil {
		return "", fmt.Errorf("run %s has a resume state of its own, after epoch %d (%s); remove it to adopt another", r.ID, own.Epoch, dst)
	} else if !errors.Is(err, ckpt.ErrNoState) {
		return "", fmt.Errorf("run %s has a resume state that cannot be read (%v); remove it to adopt another", r.ID, err)
	}

	st, _, err := ckpt.ReadState(src, info.RunID)
	if err != nil {
		return "", fmt.Errorf("adopting %s: %w", src, err)
	}
	note := fmt.Sprintf("continued the resume state of run %s %s; the two differ only in %s", info.RunID, info.ResumePoint(), describeStopDiff(from, r.Spec))
	st.Notes = append(st.Notes, note)
	if err := ckpt.WriteState(dst, r.ID, st, info.Wall, info.Segments); err != nil {
		return "", err
	}
	return note, nil
}

// stopsOnlyLater reports, as an error naming the keys, whether to differs
// from from in anything but a patience or epoch bound at least as large
// (patience 0, no early stopping, is the largest), or in the keys that never
// change a run (see grid.Differences).
func stopsOnlyLater(from, to grid.RunSpec) error {
	var other []string
	for _, d := range grid.Differences(from, to) {
		if d.Key != "patience" && d.Key != "epochs" {
			other = append(other, fmt.Sprintf("%s (%v, not %v)", d.Key, d.B, d.A))
		}
	}
	if len(other) > 0 {
		return fmt.Errorf("they differ in %s: only patience and epochs may", strings.Join(other, ", "))
	}
	if to.Epochs < from.Epochs {
		return fmt.Errorf("epochs = %d is below its %d", to.Epochs, from.Epochs)
	}
	if from.Patience == 0 && to.Patience != 0 || to.Patience != 0 && to.Patience < from.Patience {
		// The run would have stopped earlier than the state, at a point
		// the state has gone past.
		return fmt.Errorf("patience = %d stops sooner than its %d (0 is none)", to.Patience, from.Patience)
	}
	return nil
}

func describeStopDiff(from, to grid.RunSpec) string {
	var parts []string
	if from.Patience != to.Patience {
		parts = append(parts, fmt.Sprintf("patience (%d, not %d)", to.Patience, from.Patience))
	}
	if from.Epochs != to.Epochs {
		parts = append(parts, fmt.Sprintf("epochs (%d, not %d)", to.Epochs, from.Epochs))
	}
	if len(parts) == 0 {
		return "keys that change no run"
	}
	return strings.Join(parts, " and ")
}
