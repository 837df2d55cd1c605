// Package train runs one training run: shuffled mini-batches from a seed,
// an optimiser step per batch through a program compiled once, validation
// every few epochs, early stopping on a validation metric, divergence
// detection, and a final test evaluation of the best parameters.
package train
