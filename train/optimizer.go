package train

import (
	"fmt"

	"gekc/graph"
)

// Optimizer names a run's update rule and its settings; the zero value is
// Adam with PyTorch's defaults.
type Optimizer struct {
	// Name is "adam" (the default), "adagrad" or "sgd".
	Name string
	// Momentum is SGD's heavy-ball momentum, in [0, 1) (0: plain SGD).
	Momentum float64
	// InitialAccumulator is where Adagrad's sums of squared gradients start
	// (PyTorch's and kbc's default: 0).
	InitialAccumulator float64
}

// Optimizers are the names Optimizer accepts.
var Optimizers = []string{"adam", "adagrad", "sgd"}

// New returns the optimiser with learning rate lr.
func (o Optimizer) New(lr float64) (graph.Optimizer, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	switch o.Name {
	case "adagrad":
		return graph.NewAdagrad(lr, o.InitialAccumulator), nil
	case "sgd":
		return graph.NewSGD(lr, o.Momentum), nil
	}
	return graph.NewAdam(lr), nil
}

// Slots is the number of parameter-sized tensors the optimiser keeps per
// parameter (Memory.Optimizer).
func (o Optimizer) Slots() int {
	switch o.Name {
	case "adagrad":
		return 1
	case "sgd":
		if o.Momentum != 0 {
			return 1
		}
		return 0
	}
	return 2
}

func (o Optimizer) validate() error {
	switch {
	case o.Name != "" && o.Name != "adam" && o.Name != "adagrad" && o.Name != "sgd":
		return fmt.Errorf("train: unknown optimiser %q (%v)", o.Name, Optimizers)
	case o.Momentum != 0 && o.Name != "sgd":
		return fmt.Errorf("train: momentum %g is SGD's, not %s's", o.Momentum, o.name())
	case !(o.Momentum >= 0 && o.Momentum < 1):
		return fmt.Errorf("train: SGD momentum %g is not in [0, 1)", o.Momentum)
	case o.InitialAccumulator != 0 && o.Name != "adagrad":
		return fmt.Errorf("train: initial accumulator %g is Adagrad's, not %s's", o.InitialAccumulator, o.name())
	case !(o.InitialAccumulator >= 0) || o.InitialAccumulator > 1e300:
		return fmt.Errorf("train: Adagrad's initial accumulator %g must be finite and >= 0", o.InitialAccumulator)
	}
	return nil
}

func (o Optimizer) name() string {
	if o.Name == "" {
		return "adam"
	}
	return o.Name
}
