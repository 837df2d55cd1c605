// Package reporttest holds checks of what report and sweep write, shared
// by their tests: that a figure was drawn, the cells of a markdown table,
// the substrings a text lacks. It is test support, as net/http/httptest is.
package reporttest

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// Figure decodes the PNG data and checks that it is a plausible figure:
// sane dimensions and a few pixels near the colour c (what was drawn in
// it was drawn, not only the axes). It returns the image's size; what
// names the figure in errors.
func Figure(t testing.TB, what string, data []byte, c color.RGBA) image.Point {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	size := img.Bounds().Size()
	if size.X < 300 || size.Y < 200 || size.X > 5000 || size.Y > 5000 {
		t.Errorf("%s: %dx%d pixels", what, size.X, size.Y)
	}
	if n := countNear(img, c); n < 5 {
		t.Errorf("%s: %d pixels in the colour %v; nothing drawn?", what, n, c)
	}
	return size
}

// countNear counts the pixels of img within an L1 distance of 30 (over
// 8-bit R, G, B) of c, so that antialiased lines count.
func countNear(img image.Image, c color.RGBA) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if dist(pr>>8, c.R)+dist(pg>>8, c.G)+dist(pb>>8, c.B) < 30 {
				n++
			}
		}
	}
	return n
}

func dist(a uint32, b uint8) int {
	d := int(a) - int(b)
	if d < 0 {
		return -d
	}
	return d
}

// MarkdownCells returns the header and rows of the first markdown table in
// s, cells trimmed of spaces, the separator row left out.
func MarkdownCells(s string) (header []string, rows [][]string) {
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "|") {
			if header != nil {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header == nil:
			header = cells
		case strings.Trim(cells[0], "-: ") == "":
		default:
			rows = append(rows, cells)
		}
	}
	return header, rows
}

// ContainsAll returns an error naming the substrings s lacks, nil when it
// has them all.
func ContainsAll(s string, subs ...string) error {
	var missing []string
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			missing = append(missing, fmt.Sprintf("%q", sub))
		}
	}
	if len(missing) > 0 {
		return errors.New("missing " + strings.Join(missing, ", "))
	}
	return nil
}
