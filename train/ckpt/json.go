package ckpt

import "gekc/internal/jsonfloat"

// jsonFloat survives NaN and ±Inf in JSON (see internal/jsonfloat): the
// state's losses are written as metrics.json writes them.
type jsonFloat = jsonfloat.Float

var (
	toJSONMap   = jsonfloat.Map
	fromJSONMap = jsonfloat.Unmap
)
