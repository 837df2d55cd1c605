// Package tfevents writes TensorBoard event files: scalar summaries, one
// record per step, that `tensorboard --logdir` shows as curves while a run
// trains.
//
// A file is a sequence of TFRecords (a little-endian uint64 length, its
// masked CRC-32C, the data, the data's masked CRC-32C), each holding one
// Event protocol buffer: the first says the file version ("brain.Event:2"),
// every later one carries a step, a wall time and a Summary of scalar
// values. Open appends to a directory's file, first cutting it after the
// last step a resumed run keeps, so that a run interrupted and resumed
// leaves the file an uninterrupted one would have written, no step twice
// and none missing.
package tfevents
