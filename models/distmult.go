package models

// DistMult is φ(s,r,o) = Σ_i e_si·w_ri·e_oi (Yang et al. 2015): CP whose
// subjects and objects share one entity table, so φ is symmetric in s and
// o. CP's queries, squared partition function and initialisation hold as
// they are; only the layout differs. Its squared version needs one |E|×d
// Gram matrix where CP² needs two (RoleGram builds a shared table's once);
// it is the model the PyTorch peer (../shared/bench) calls CP².
type DistMult struct{ CP }

func init() { Register("distmult", func() ScoreFunction { return DistMult{} }) }

func (DistMult) Name() string { return "distmult" }

func (DistMult) Layout(sz Sizes) Layout {
	return Layout{
		Tables: []TableSpec{
			{Name: "entity", Rows: sz.Entities, Cols: sz.Rank},
			{Name: "relation", Rows: sz.Relations, Cols: sz.Rank},
		},
		Subject: "entity", Relation: "relation", Object: "entity",
	}
}
