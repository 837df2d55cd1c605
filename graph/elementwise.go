package graph

import (
	"fmt"
	"math"

	"gekc/internal/logmath"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// binaryKind enumerates the elementwise binary operations. LogAddExp is the
// "addition" of the log semiring, in which the non-negative models compute.
type binaryKind int

const (
	kindAdd binaryKind = iota
	kindSub
	kindMul
	kindLogAddExp
)

var binaryNames = [...]string{"Add", "Sub", "Mul", "LogAddExp"}

// binaryOp applies an elementwise operation to two matrices of equal shape,
// or broadcasts an operand with a single row over the rows of the other; the
// latter is how a marginalised variable (a column sum) meets a batch.
type binaryOp struct {
	base
	kind binaryKind
}

func newBinary(kind binaryKind, a, b *G.Node) (*G.Node, error) {
	if a.Dims() != b.Dims() || a.Dims() > 2 {
		return nil, fmt.Errorf("graph.%s: operands %v and %v must both be vectors or matrices", binaryNames[kind], a.Shape(), b.Shape())
	}
	op := &binaryOp{base: newBase(binaryNames[kind]), kind: kind}
	return apply(op, a, b)
}

// Add returns a + b elementwise (row-broadcasting an operand with one row).
func Add(a, b *G.Node) (*G.Node, error) { return newBinary(kindAdd, a, b) }

// Sub returns a − b elementwise (row-broadcasting an operand with one row).
func Sub(a, b *G.Node) (*G.Node, error) { return newBinary(kindSub, a, b) }

// Mul returns the Hadamard product a ∘ b (row-broadcasting an operand with one row).
func Mul(a, b *G.Node) (*G.Node, error) { return newBinary(kindMul, a, b) }

// LogAddExp returns log(exp(a) + exp(b)) elementwise, computed stably.
func LogAddExp(a, b *G.Node) (*G.Node, error) { return newBinary(kindLogAddExp, a, b) }

func (o *binaryOp) Arity() int         { return 2 }
func (o *binaryOp) Type() hm.Type      { return hm.NewFnType(tvA, tvA, tvA) }
func (o *binaryOp) DiffWRT(int) []bool { return []bool{true, true} }

func broadcastShape(a, b tensor.Shape) (tensor.Shape, error) {
	if a.Eq(b) {
		return a.Clone(), nil
	}
	ra, ca := rowsCols(a)
	rb, cb := rowsCols(b)
	if ca != cb || len(a) != len(b) || (ra != 1 && rb != 1) {
		return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
	}
	s := a.Clone()
	s[0] = max(ra, rb)
	return s, nil
}

func (o *binaryOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return broadcastShape(dims(in[0]), dims(in[1]))
}

func (o *binaryOp) Do(in ...G.Value) (G.Value, error) {
	if isScalar(in[0]) && isScalar(in[1]) {
		a, b := []float64{scalarOf(in[0])}, []float64{scalarOf(in[1])}
		y := []float64{0}
		binaryKernel(o.kind, a, b, y, tensor.Shape{1})
		return dispatch(in[0],
			func() (G.Value, error) { return scalarValue(float32(y[0])), nil },
			func() (G.Value, error) { return scalarValue(y[0]), nil })
	}
	s, err := broadcastShape(shapeOf(in[0]), shapeOf(in[1]))
	if err != nil {
		return nil, fmt.Errorf("%v: %w", o, err)
	}
	out := o.buffer(in[0].Dtype(), s...)
	return dispatch(in[0],
		func() (G.Value, error) {
			binaryKernel(o.kind, data[float32](in[0]), data[float32](in[1]), data[float32](out), s)
			return out, nil
		},
		func() (G.Value, error) {
			binaryKernel(o.kind, data[float64](in[0]), data[float64](in[1]), data[float64](out), s)
			return out, nil
		})
}

func binaryKernel[T Float](kind binaryKind, a, b, out []T, s tensor.Shape) {
	rows, cols := rowsCols(s)
	// stride 0 over rows broadcasts a single-row operand.
	sa, sb := cols, cols
	if len(a) != len(out) {
		sa = 0
	}
	if len(b) != len(out) {
		sb = 0
	}
	parallelFor(rows, rows*cols*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ar, br, or := a[i*sa:i*sa+cols], b[i*sb:i*sb+cols], out[i*cols:(i+1)*cols]
			switch kind {
			case kindAdd:
				for j := range or {
					or[j] = ar[j] + br[j]
				}
			case kindSub:
				for j := range or {
					or[j] = ar[j] - br[j]
				}
			case kindMul:
				for j := range or {
					or[j] = ar[j] * br[j]
				}
			case kindLogAddExp:
				for j := range or {
					or[j] = T(logmath.LogAddExp(float64(ar[j]), float64(br[j])))
				}
			}
		}
	})
}

func (o *binaryOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	ga, err := apply(&binaryGradOp{base: newBase(o.name + "Grad0"), kind: o.kind, which: 0}, grad, in[0], in[1], out)
	if err != nil {
		return nil, err
	}
	gb, err := apply(&binaryGradOp{base: newBase(o.name + "Grad1"), kind: o.kind, which: 1}, grad, in[0], in[1], out)
	if err != nil {
		return nil, err
	}
	return G.Nodes{ga, gb}, nil
}

// binaryGradOp computes the gradient of a binaryOp with respect to one
// operand, summing over rows when that operand was broadcast.
type binaryGradOp struct {
	base
	kind  binaryKind
	which int
}

func (o *binaryGradOp) Arity() int         { return 4 }
func (o *binaryGradOp) Type() hm.Type      { return hm.NewFnType(tvA, tvA, tvA, tvA, tvA) }
func (o *binaryGradOp) DiffWRT(int) []bool { return []bool{false, false, false, false} }
func (o *binaryGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *binaryGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[1+o.which]).Clone(), nil
}

func (o *binaryGradOp) Do(in ...G.Value) (G.Value, error) {
	if isScalar(in[1]) && isScalar(in[2]) {
		y := []float64{0}
		binaryGradKernel(o.kind, o.which, []float64{scalarOf(in[0])}, []float64{scalarOf(in[1])},
			[]float64{scalarOf(in[2])}, []float64{scalarOf(in[3])}, y, tensor.Shape{1})
		return dispatch(in[1],
			func() (G.Value, error) { return scalarValue(float32(y[0])), nil },
			func() (G.Value, error) { return scalarValue(y[0]), nil })
	}
	target := shapeOf(in[1+o.which])
	out := o.buffer(in[0].Dtype(), target...)
	return dispatch(in[0],
		func() (G.Value, error) {
			binaryGradKernel(o.kind, o.which, data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), data[float32](in[3]), data[float32](out), shapeOf(in[0]))
			return out, nil
		},
		func() (G.Value, error) {
			binaryGradKernel(o.kind, o.which, data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), data[float64](in[3]), data[float64](out), shapeOf(in[0]))
			return out, nil
		})
}

func binaryGradKernel[T Float](kind binaryKind, which int, g, a, b, y, out []T, s tensor.Shape) {
	rows, cols := rowsCols(s)
	sa, sb := cols, cols
	if len(a) != len(g) {
		sa = 0
	}
	if len(b) != len(g) {
		sb = 0
	}
	reduce := len(out) != len(g)
	if reduce {
		clear(out)
	}
	for i := 0; i < rows; i++ {
		gr, ar, br, yr := g[i*cols:(i+1)*cols], a[i*sa:i*sa+cols], b[i*sb:i*sb+cols], y[i*cols:(i+1)*cols]
		or := out[:cols]
		if !reduce {
			or = out[i*cols : (i+1)*cols]
		}
		for j := range gr {
			var d T
			switch kind {
			case kindAdd:
				d = gr[j]
			case kindSub:
				d = gr[j]
				if which == 1 {
					d = -d
				}
			case kindMul:
				if which == 0 {
					d = gr[j] * br[j]
				} else {
					d = gr[j] * ar[j]
				}
			case kindLogAddExp:
				x := ar[j]
				if which == 1 {
					x = br[j]
				}
				if !math.IsInf(float64(yr[j]), -1) {
					d = gr[j] * T(math.Exp(float64(x-yr[j])))
				}
			}
			if reduce {
				or[j] += d
			} else {
				or[j] = d
			}
		}
	}
}

func errNoSecondOrder(op fmt.Stringer) error {
	return fmt.Errorf("graph: %v is a gradient op; second derivatives are not supported", op)
}

// unaryKind enumerates elementwise unary functions.
type unaryKind int

const (
	kindScale      unaryKind = iota // c·x
	kindExp                         // exp(x)
	kindLogPos                      // log(max(x,0) + c): log of a sum that is non-negative in exact arithmetic
	kindLogSquare                   // log(x² + c): the log of a squared score plus its epsilon mass
	kindLogSigmoid                  // log σ(x)
	kindLog1mExp                    // log(1 − exp(x)) for x ≤ 0
	kindShift                       // x + c: a scale in the log semiring (Go only; the C kernels number the kinds above)
)

var unaryNames = [...]string{"Scale", "Exp", "LogPos", "LogSquare", "LogSigmoid", "Log1mExp", "Shift"}

type unaryOp struct {
	base
	kind unaryKind
	c    float64
}

func newUnary(kind unaryKind, c float64, x *G.Node) (*G.Node, error) {
	name := unaryNames[kind]
	if kind == kindScale || kind == kindLogPos || kind == kindLogSquare || kind == kindShift {
		name = fmt.Sprintf("%s(%g)", name, c)
	}
	return apply(&unaryOp{base: newBase(name), kind: kind, c: c}, x)
}

// Scale returns c·x.
func Scale(x *G.Node, c float64) (*G.Node, error) { return newUnary(kindScale, c, x) }

// Shift returns x + c: multiplying by e^c in the log semiring.
func Shift(x *G.Node, c float64) (*G.Node, error) { return newUnary(kindShift, c, x) }

// Exp returns exp(x) elementwise.
func Exp(x *G.Node) (*G.Node, error) { return newUnary(kindExp, 0, x) }

// LogPos returns log(max(x, 0) + c). It takes the log of sums such as qᵀGq
// that are non-negative in exact arithmetic but may round below zero; c > 0
// is the epsilon mass that keeps the result finite.
func LogPos(x *G.Node, c float64) (*G.Node, error) { return newUnary(kindLogPos, c, x) }

// LogSquare returns log(x² + c), the log-score of a squared circuit with a
// uniform epsilon mass c per triple.
func LogSquare(x *G.Node, c float64) (*G.Node, error) { return newUnary(kindLogSquare, c, x) }

// LogSigmoid returns log σ(x), computed without overflow.
func LogSigmoid(x *G.Node) (*G.Node, error) { return newUnary(kindLogSigmoid, 0, x) }

// Log1mExp returns log(1 − exp(x)) for x ≤ 0 (Mächler's accurate form).
func Log1mExp(x *G.Node) (*G.Node, error) { return newUnary(kindLog1mExp, 0, x) }

func (o *unaryOp) Arity() int                                        { return 1 }
func (o *unaryOp) Type() hm.Type                                     { return hm.NewFnType(tvA, tvA) }
func (o *unaryOp) DiffWRT(int) []bool                                { return []bool{true} }
func (o *unaryOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) { return dims(in[0]).Clone(), nil }

func (o *unaryOp) Do(in ...G.Value) (G.Value, error) {
	if isScalar(in[0]) {
		return dispatch(in[0],
			func() (G.Value, error) { return scalarValue(float32(unaryFn(o.kind, o.c, scalarOf(in[0])))), nil },
			func() (G.Value, error) { return scalarValue(unaryFn(o.kind, o.c, scalarOf(in[0]))), nil })
	}
	out := o.buffer(in[0].Dtype(), shapeOf(in[0])...)
	return dispatch(in[0],
		func() (G.Value, error) {
			unaryKernel(o.kind, o.c, data[float32](in[0]), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			unaryKernel(o.kind, o.c, data[float64](in[0]), data[float64](out))
			return out, nil
		})
}

func unaryKernel[T Float](kind unaryKind, c float64, x, out []T) {
	switch kind {
	case kindScale:
		s := T(c)
		for i, v := range x {
			out[i] = s * v
		}
		return
	case kindShift:
		s := T(c)
		for i, v := range x {
			out[i] = v + s
		}
		return
	}
	parallelFor(len(x), len(x)*8, func(lo, hi int) {
		if xs, ok := any(x).([]float32); ok && unaryF32(kind, float32(c), xs[lo:hi], any(out).([]float32)[lo:hi]) {
			return
		}
		for i := lo; i < hi; i++ {
			out[i] = T(unaryFn(kind, c, float64(x[i])))
		}
	})
}

func unaryFn(kind unaryKind, c, x float64) float64 {
	switch kind {
	case kindScale:
		return c * x
	case kindShift:
		return x + c
	case kindExp:
		return math.Exp(x)
	case kindLogPos:
		return math.Log(math.Max(x, 0) + c)
	case kindLogSquare:
		return math.Log(x*x + c)
	case kindLogSigmoid:
		if x < 0 {
			return x - math.Log1p(math.Exp(x))
		}
		return -math.Log1p(math.Exp(-x))
	case kindLog1mExp:
		if x > -math.Ln2 {
			return math.Log(-math.Expm1(x))
		}
		return math.Log1p(-math.Exp(x))
	}
	panic("unreachable")
}

// unaryDeriv returns f'(x) given x and y = f(x).
func unaryDeriv(kind unaryKind, c, x, y float64) float64 {
	switch kind {
	case kindScale:
		return c
	case kindShift:
		return 1
	case kindExp:
		return y
	case kindLogPos:
		if x <= 0 {
			return 0
		}
		return 1 / (x + c)
	case kindLogSquare:
		return 2 * x / (x*x + c)
	case kindLogSigmoid:
		// d/dx log σ(x) = 1 − σ(x) = σ(−x)
		return 1 / (1 + math.Exp(x))
	case kindLog1mExp:
		// d/dx log(1−eˣ) = −eˣ/(1−eˣ) = −1/expm1(−x)
		return -1 / math.Expm1(-x)
	}
	panic("unreachable")
}

func (o *unaryOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	switch o.kind {
	case kindScale:
		g, err := Scale(grad, o.c)
		return G.Nodes{g}, err
	case kindShift:
		return G.Nodes{grad}, nil
	}
	g, err := apply(&unaryGradOp{base: newBase(o.name + "Grad"), kind: o.kind, c: o.c}, grad, in[0], out)
	return G.Nodes{g}, err
}

type unaryGradOp struct {
	base
	kind unaryKind
	c    float64
}

func (o *unaryGradOp) Arity() int         { return 3 }
func (o *unaryGradOp) Type() hm.Type      { return hm.NewFnType(tvA, tvA, tvA, tvA) }
func (o *unaryGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *unaryGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *unaryGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[1]).Clone(), nil
}

func (o *unaryGradOp) Do(in ...G.Value) (G.Value, error) {
	if isScalar(in[1]) {
		d := scalarOf(in[0]) * unaryDeriv(o.kind, o.c, scalarOf(in[1]), scalarOf(in[2]))
		return dispatch(in[1],
			func() (G.Value, error) { return scalarValue(float32(d)), nil },
			func() (G.Value, error) { return scalarValue(d), nil })
	}
	out := o.buffer(in[1].Dtype(), shapeOf(in[1])...)
	return dispatch(in[1],
		func() (G.Value, error) {
			unaryGradKernel(o.kind, o.c, data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			unaryGradKernel(o.kind, o.c, data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), data[float64](out))
			return out, nil
		})
}

func unaryGradKernel[T Float](kind unaryKind, c float64, g, x, y, out []T) {
	parallelFor(len(x), len(x)*8, func(lo, hi int) {
		if xs, ok := any(x).([]float32); ok && unaryGradF32(kind, float32(c), any(g).([]float32)[lo:hi], xs[lo:hi],
			any(y).([]float32)[lo:hi], any(out).([]float32)[lo:hi]) {
			return
		}
		for i := lo; i < hi; i++ {
			out[i] = g[i] * T(unaryDeriv(kind, c, float64(x[i]), float64(y[i])))
		}
	})
}
