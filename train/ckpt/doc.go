// Package ckpt reads and writes what a training run leaves on disk: the
// checkpoint of its trained parameters (CheckpointName) and the resume
// state an unfinished run continues from (StateName). Both are NumPy .npz
// archives, readable in Python with numpy.load, and both are written
// atomically (a reader or a restarted process sees the old file or the new
// one, never a part).
//
// Files are never trusted: every .npy entry is read through one hardened
// reader that bounds what a file can make it allocate and turns malformed
// headers into errors naming the file and entry, never panics.
//
// It is a package of its own, not part of train, so that the training loop
// stays free of file formats: train.Run takes an initialiser
// (train.Config.Init) and a resume State, and returns the trained model;
// this package turns those into files and back.
package ckpt
