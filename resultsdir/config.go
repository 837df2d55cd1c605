package resultsdir

import (
	"bytes"
	"fmt"

	"gekc/grid"
	"gekc/internal/atomicfile"

	"github.com/BurntSushi/toml"
)

// WriteConfig writes the fully resolved spec as TOML (a run's
// config.toml), readable by ReadConfig and by people.
func WriteConfig(path string, spec grid.RunSpec) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Fully resolved run %s, written by gekc experiments.\n", spec.ID())
	if err := toml.NewEncoder(&b).Encode(spec); err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, b.Bytes(), 0o644)
}

// ReadConfig reads a run's config.toml back; keys it lacks take their
// defaults.
func ReadConfig(path string) (grid.RunSpec, error) {
	spec := grid.DefaultRunSpec()
	md, err := toml.DecodeFile(path, &spec)
	if err != nil {
		return spec, fmt.Errorf("reading %s: %w", path, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return spec, fmt.Errorf("reading %s: unknown key %q", path, u[0].String())
	}
	return spec, nil
}
