package runspec

import (
	"fmt"
	"os"

	"gekc/grid"
	"gekc/internal/bytesize"
	"gekc/internal/procstat"
	"gekc/train"
)

// MemoryBudget returns the memory budget of a run in bytes (0: none): its
// memory key, else GOMEMLIMIT when set, else 90% of the machine's memory.
// A run's evaluation batch is cut to fit it and a run that cannot fit it
// is refused at preflight (train.EstimateMemory).
func MemoryBudget(spec grid.RunSpec) (int64, error) {
	if spec.Memory != "" {
		var b bytesize.Size
		if err := b.Set(spec.Memory); err != nil {
			return 0, fmt.Errorf("memory: %w", err)
		}
		return int64(b), nil
	}
	if v := os.Getenv("GOMEMLIMIT"); v != "" && v != "off" {
		var b bytesize.Size
		if err := b.Set(v); err != nil {
			return 0, fmt.Errorf("GOMEMLIMIT: %w", err)
		}
		return int64(b), nil
	}
	total, err := procstat.MemTotal()
	if err != nil {
		return 0, nil // no way to know: no budget
	}
	return total / 10 * 9, nil
}

// EstimateRun returns what a run will hold in memory on a data set of
// these sizes, under its budget (see MemoryBudget), and an error when it
// cannot fit.
func EstimateRun(spec grid.RunSpec, sz train.DataSizes) (train.Memory, int64, error) {
	cfg, err := TrainConfig(spec)
	if err != nil {
		return train.Memory{}, 0, err
	}
	if cfg.MemoryBudget, err = MemoryBudget(spec); err != nil {
		return train.Memory{}, 0, err
	}
	mem, err := train.EstimateMemory(cfg, sz)
	return mem, cfg.MemoryBudget, err
}

// DefaultMemory gives memory (the command's -memory, e.g. 12GiB) as the
// budget of every run whose grid sets no memory key; the key is not part
// of a run's ID, so setting it changes no run.
func DefaultMemory(runs []grid.Run, memory string) error {
	if _, err := MemoryBudget(grid.RunSpec{Memory: memory}); err != nil {
		return fmt.Errorf("-memory: %v", err)
	}
	for i := range runs {
		if runs[i].Spec.Memory == "" {
			runs[i].Spec.Memory = memory
		}
	}
	return nil
}
