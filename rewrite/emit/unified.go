package emit

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
)

// context is the number of unchanged lines around each change, as in
// go-internal's diff (and git's default).
const context = 3

// noNewline is what diff.Diff appends to a last line without a newline.
const noNewline = "\n\\ No newline at end of file\n"

// hunks writes the hunks of a unified diff of one file whose old and new
// text arrive in pieces: runs of text both sides share (equal), and
// replaced pieces (change), each diffed on its own with go-internal's
// anchored diff. The hunks are merged and given context exactly as
// diff.Diff merges the matches of one whole-file diff, so a file that is
// one piece gets diff.Diff's output, and a 50 MB file is diffed one
// document at a time in memory that does not grow with it.
type hunks struct {
	w io.Writer
	// x and y count the old and new lines before the current equal run.
	x, y int
	// The open hunk: its first line on each side (0-based), its line
	// counts, and its lines so far (with their " ", "-" or "+" prefix).
	open   bool
	cx, cy int
	nx, ny int
	text   []string
	// The current equal run: its length, its first 2*context lines and a
	// ring of its last context lines.
	run  int
	head []string
	tail [context]string
	// The gap after the last equal run, not written yet: gaps with no
	// equal line between them are one gap (deletions before insertions),
	// as in a diff of the whole file.
	pending    bool
	pdel, pins []string
	// changed is set once a line differs.
	changed bool
	err     error
}

func (h *hunks) equal(lines []string) {
	if len(lines) == 0 {
		return
	}
	h.writeGap()
	for _, l := range lines {
		if len(h.head) < 2*context {
			h.head = append(h.head, l)
		}
		h.tail[h.run%context] = l
		h.run++
	}
}

// gap adds deleted and inserted lines after the current equal run.
func (h *hunks) gap(del, ins []string) {
	if len(del) == 0 && len(ins) == 0 {
		return
	}
	h.changed = true
	if !h.pending {
		h.settle(false)
		h.pending = true
	}
	h.pdel = append(h.pdel, del...)
	h.pins = append(h.pins, ins...)
}

func (h *hunks) writeGap() {
	if !h.pending {
		return
	}
	for _, s := range h.pdel {
		h.line("-", s)
	}
	for _, s := range h.pins {
		h.line("+", s)
	}
	h.x += len(h.pdel)
	h.y += len(h.pins)
	h.pending, h.pdel, h.pins = false, h.pdel[:0], h.pins[:0]
}

// finish ends the diff at the end of the file.
func (h *hunks) finish() {
	h.writeGap()
	h.settle(true)
}

// last returns the last n (<= context) lines of the current run.
func (h *hunks) last(n int) []string {
	out := make([]string, 0, n)
	for i := h.run - n; i < h.run; i++ {
		out = append(out, h.tail[i%context])
	}
	return out
}

// settle decides what the current equal run contributes, as diff.Diff
// does for one match: a short run between changes stays inside the hunk;
// a longer one (or the last one) ends the hunk with context lines, and
// unless it is the last, opens the next hunk with context lines.
func (h *hunks) settle(final bool) {
	l := h.run
	switch {
	case !final && (l < context || h.open && l < 2*context):
		if !h.open {
			h.open, h.cx, h.cy = true, h.x, h.y
		}
		for _, s := range h.head[:l] {
			h.line(" ", s)
		}
	default:
		if h.open {
			for _, s := range h.head[:min(l, context)] {
				h.line(" ", s)
			}
			h.flush()
		}
		if !final {
			h.open, h.cx, h.cy = true, h.x+l-context, h.y+l-context
			for _, s := range h.last(context) {
				h.line(" ", s)
			}
		}
	}
	h.x += l
	h.y += l
	h.run, h.head = 0, h.head[:0]
}

func (h *hunks) line(prefix, s string) {
	h.text = append(h.text, prefix+s)
	if prefix != "+" {
		h.nx++
	}
	if prefix != "-" {
		h.ny++
	}
}

func (h *hunks) flush() {
	cx, cy := h.cx, h.cy
	if h.nx > 0 {
		cx++
	}
	if h.ny > 0 {
		cy++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", cx, h.nx, cy, h.ny)
	for _, s := range h.text {
		b.WriteString(s)
	}
	if h.err == nil {
		_, h.err = io.WriteString(h.w, b.String())
	}
	h.open, h.nx, h.ny, h.text = false, 0, 0, h.text[:0]
}

// lines splits text into lines with their newlines; a last line without
// one carries diff.Diff's "No newline" marker (only the end of a file can
// lack it).
func lines(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	l := strings.SplitAfter(string(text), "\n")
	if l[len(l)-1] == "" {
		return l[:len(l)-1]
	}
	l[len(l)-1] += noNewline
	return l
}

// change diffs one replaced piece with diff.Diff and feeds its matches and
// gaps to the hunks.
func (h *hunks) change(old, new []byte) {
	ox, oy := lines(old), lines(new)
	if bytes.Equal(old, new) {
		h.equal(ox)
		return
	}
	// diff.Diff's output: three header lines, then hunks whose lines are
	// " ", "-" or "+" and a line of old or new (a line with the "No
	// newline" marker spans two lines of the output). Only the hunk
	// headers and prefixes are read; the lines themselves come from ox
	// and oy.
	out := strings.SplitAfter(string(diff.Diff("a", old, "b", new)), "\n")[3:]
	px, py := 0, 0 // next old and new line
	for _, s := range out {
		switch {
		case strings.HasPrefix(s, "@@ "):
			sx, sy := hunkStart(s)
			h.equal(ox[px:sx]) // between hunks: equal on both sides
			px, py = sx, sy
		case strings.HasPrefix(s, " "):
			h.equal(ox[px : px+1])
			px++
			py++
		case strings.HasPrefix(s, "-"):
			h.gap(ox[px:px+1], nil)
			px++
		case strings.HasPrefix(s, "+"):
			h.gap(nil, oy[py:py+1])
			py++
		}
	}
	h.equal(ox[px:])
}

// hunkStart reads the 0-based first old and new line of a hunk header
// "@@ -a,b +c,d @@" (a count of 0 leaves the start unincremented).
func hunkStart(header string) (int, int) {
	f := strings.Fields(header)
	parse := func(s string) int {
		start, count, _ := strings.Cut(s[1:], ",")
		a, _ := strconv.Atoi(start)
		if n, _ := strconv.Atoi(count); n > 0 {
			a--
		}
		return a
	}
	return parse(f[1]), parse(f[2])
}
