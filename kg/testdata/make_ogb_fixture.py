#!/usr/bin/env python3
"""Writes the tiny ogbl-biokg fixtures used by kg's tests.

Run from kg/testdata with Debian's python3-torch (torch 1.13, numpy 1.24):

    /usr/bin/python3 make_ogb_fixture.py

The output is committed; the Go tests never run Python.

ogbl_biokg_tiny/ mirrors the layout of OGB's ogbl_biokg download, which is
what ogb.linkproppred.LinkPropPredDataset reads:

    raw/num-node-dict.csv.gz          header of node types, one row of counts
    split/random/{train,valid,test}.pt  torch.save'd dicts of numpy arrays:
        head, relation, tail          int64, shape (n,); head and tail are
                                      indices local to their node type
        head_type, tail_type          list of str, one per edge
        head_neg, tail_neg            int64, shape (n, k), valid/test only,
                                      local to head_type / tail_type
    mapping/relidx2relname.csv.gz     "rel idx,rel name"
    mapping/<type>_entidx2name.csv.gz "ent idx,ent name"

The real data set has 5 node types (93,773 nodes), 51 relations, 4,762,678
train edges and 162,886 valid / 162,870 test edges with 500 negatives each
side. Here: 3 types (8 nodes), 4 relations, 3 negatives.

ogbl_biokg_tiny_legacy/ holds the same graph written differently, to cover
the other encodings a .pt file may use: the legacy (non-zip) torch format,
torch tensors instead of numpy arrays, numpy str arrays for the types, and
no mapping/ directory (names then fall back to type:index).

pt/arrays_*.pt hold one dict of assorted arrays (see ARRAYS) in the zip
and legacy formats and in pickle protocols 2 and 4, for the reader's own
tests.
"""

import csv
import gzip
import io
import os
import shutil

import numpy as np
import torch

TYPES = {"protein": 3, "drug": 3, "disease": 2}  # deliberately unsorted
RELATIONS = [
    ("disease-protein", "disease", "protein"),
    ("drug-disease", "drug", "disease"),
    ("drug-protein", "drug", "protein"),
    ("protein-protein_binding", "protein", "protein"),
]
NAMES = {
    "disease": ["C0002395", "C0011849"],
    "drug": ["CID000002244", "CID000003672", "CID000005090"],
    "protein": ["348", "5743", "7124"],
}
# (head, relation, tail), local indices.
TRAIN = [(0, 0, 0), (1, 0, 2), (0, 1, 0), (1, 1, 1), (2, 1, 1),
         (0, 2, 1), (2, 2, 2), (0, 3, 1), (1, 3, 2), (2, 3, 0),
         (0, 3, 1)]  # the last edge repeats the eighth: a duplicate
VALID = [(1, 2, 0), (0, 0, 1)]
TEST = [(2, 1, 0), (2, 3, 1)]
NEG = 3


def gz_csv(path, rows):
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    with open(path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
            f.write(text.getvalue().encode())


def split_dict(edges, negatives, tensors, str_arrays):
    head = np.array([h for h, _, _ in edges], dtype=np.int64)
    rel = np.array([r for _, r, _ in edges], dtype=np.int64)
    tail = np.array([t for _, _, t in edges], dtype=np.int64)
    head_type = [RELATIONS[r][1] for _, r, _ in edges]
    tail_type = [RELATIONS[r][2] for _, r, _ in edges]
    d = {"head": head, "relation": rel, "tail": tail,
         "head_type": head_type, "tail_type": tail_type}
    if negatives:
        # Negatives are local to the type of the side they replace; a fixed
        # pattern keeps the expected values easy to state in the Go test.
        d["head_neg"] = np.array(
            [[k % TYPES[ht] for k in range(NEG)] for ht in head_type], dtype=np.int64)
        d["tail_neg"] = np.array(
            [[(k + 1) % TYPES[tt] for k in range(NEG)] for tt in tail_type], dtype=np.int64)
    if tensors:
        for k in ("head", "relation", "tail", "head_neg", "tail_neg"):
            if k in d:
                d[k] = torch.from_numpy(d[k])
    if str_arrays:
        d["head_type"] = np.array(head_type)
        d["tail_type"] = np.array(tail_type, dtype=object)
    return d


def write(root, legacy):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "raw"))
    os.makedirs(os.path.join(root, "split", "random"))
    gz_csv(os.path.join(root, "raw", "num-node-dict.csv.gz"),
           [list(TYPES), [TYPES[t] for t in TYPES]])
    for name, edges in (("train", TRAIN), ("valid", VALID), ("test", TEST)):
        d = split_dict(edges, name != "train", tensors=legacy, str_arrays=legacy)
        torch.save(d, os.path.join(root, "split", "random", name + ".pt"),
                   _use_new_zipfile_serialization=not legacy)
    if legacy:
        return
    os.makedirs(os.path.join(root, "mapping"))
    gz_csv(os.path.join(root, "mapping", "relidx2relname.csv.gz"),
           [["rel idx", "rel name"]] + [[i, r[0]] for i, r in enumerate(RELATIONS)])
    for t, names in NAMES.items():
        gz_csv(os.path.join(root, "mapping", t + "_entidx2name.csv.gz"),
               [["ent idx", "ent name"]] + [[i, n] for i, n in enumerate(names)])


def arrays():
    """What pt_test.go expects, value for value."""
    long = torch.arange(6, dtype=torch.int64).reshape(2, 3)
    return {
        "long": long,                                   # [[0 1 2] [3 4 5]]
        "long_t": long.t(),                             # a strided view
        "offset": torch.arange(10)[3:7],                # storage offset 3
        "int32": torch.tensor([-1, 2], dtype=torch.int32),
        "np_fortran": np.asfortranarray(np.arange(6).reshape(2, 3)),
        "np_big": np.arange(3, dtype=">i4"),
        "np_u8": np.array([0, 255], dtype=np.uint8),
        "np_i16": np.array([-300, 300], dtype=np.int16),
        "np_str": np.array(["a", "bcd", "\u00e9\u4e2d"]),
        "np_obj": np.array(["x", "yz"], dtype=object),
        "list": [1, 2, 3],
        "strs": ["a", "b"],
    }


if __name__ == "__main__":
    write("ogbl_biokg_tiny", legacy=False)
    write("ogbl_biokg_tiny_legacy", legacy=True)
    os.makedirs("pt", exist_ok=True)
    for legacy in (False, True):
        for proto in (2, 4):
            name = "pt/arrays_%s_p%d.pt" % ("legacy" if legacy else "zip", proto)
            torch.save(arrays(), name, pickle_protocol=proto,
                       _use_new_zipfile_serialization=not legacy)
