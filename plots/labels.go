package plots

import "gonum.org/v1/plot/vg"

// labelBox is a label's rectangle on the canvas, relative to nothing in
// particular: Min is its lower-left corner.
type labelBox struct{ Min, Max vg.Point }

func (a labelBox) overlaps(b labelBox) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// placeLabels returns an offset (from its anchor to its lower-left
// corner) for each label of the given size anchored at the given canvas
// point, so that no two labels overlap: each takes the first free place,
// in order, right-above, right-below, left-above, left-below of its
// anchor, then the same places moved up and down by a line at a time.
// Labels are placed in the order given, and none covers the square of
// half-side markR around any anchor (the marker drawn there).
func placeLabels(anchors, sizes []vg.Point, markR vg.Length) []vg.Point {
	offs, _ := placeLabelsIn(anchors, sizes, markR, nil)
	return offs
}

// placeLabelsIn is placeLabels within bounds (nil: anywhere): a place
// whose box leaves bounds is not free, and a label with no free place
// inside gets ok[i] false (not to be drawn).
func placeLabelsIn(anchors, sizes []vg.Point, markR vg.Length, bounds *labelBox) (offsets []vg.Point, ok []bool) {
	const gapX, gapY = vg.Length(7), vg.Length(4)
	offsets = make([]vg.Point, len(anchors))
	ok = make([]bool, len(anchors))
	var placed []labelBox
	for _, a := range anchors {
		placed = append(placed, labelBox{Min: vg.Point{X: a.X - markR, Y: a.Y - markR}, Max: vg.Point{X: a.X + markR, Y: a.Y + markR}})
	}
	for i, a := range anchors {
		w, h := sizes[i].X, sizes[i].Y
		line := h + 2
		base := []vg.Point{{X: gapX, Y: gapY}, {X: gapX, Y: -gapY - h}, {X: -gapX - w, Y: gapY}, {X: -gapX - w, Y: -gapY - h}}
		var chosen vg.Point
		found := false
		for step := 0; !found && step <= 8*len(anchors)+8; step++ {
			for _, b := range base {
				for _, sign := range []vg.Length{1, -1} {
					if step == 0 && sign < 0 {
						continue
					}
					o := vg.Point{X: b.X, Y: b.Y + sign*vg.Length(step)*line}
					box := labelBox{Min: vg.Point{X: a.X + o.X, Y: a.Y + o.Y}, Max: vg.Point{X: a.X + o.X + w, Y: a.Y + o.Y + h}}
					free := bounds == nil || (box.Min.X >= bounds.Min.X && box.Min.Y >= bounds.Min.Y &&
						box.Max.X <= bounds.Max.X && box.Max.Y <= bounds.Max.Y)
					for _, p := range placed {
						if !free {
							break
						}
						if box.overlaps(p) {
							free = false
							break
						}
					}
					if free {
						chosen, found = o, true
						placed = append(placed, box)
						break
					}
				}
				if found {
					break
				}
			}
		}
		offsets[i], ok[i] = chosen, found
	}
	return offsets, ok
}
