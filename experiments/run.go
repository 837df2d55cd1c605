package main

import (
	"context"
	"errors"
)

// runTraining is replaced by the real call into the train package.
var runTraining RunFunc = func(ctx context.Context, job Job) (*Outcome, error) {
	return nil, errors.New("training is not wired yet")
}
