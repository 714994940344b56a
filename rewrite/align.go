package rewrite

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
)

// Aligning texts line by line: which line of one text each line of another
// is, for splice.

// keys are lines as compared with the old text: without the line end and
// trailing blanks, runs of spaces after the indentation as one.
func keys(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(spacingKey([]byte(strings.TrimRight(l, " \t\r\n"))), " ") + "\n"
	}
	return out
}

// looseKeys are keys without the indentation.
func looseKeys(lines []string) []string {
	out := keys(lines)
	for i, k := range out {
		out[i] = strings.TrimLeft(k, " ")
	}
	return out
}

// matched counts the lines an alignment matched.
func matched(m []int) int {
	n := 0
	for _, v := range m {
		if v >= 0 {
			n++
		}
	}
	return n
}

// align matches lines of a to lines of b with go-internal's anchored diff
// (what the diffs kubedra prints use): for each line of a, the index of
// the line of b it equals in the diff, or -1. Every line ends with "\n".
func align(a, b []string) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	fix := func(ls []string) []byte {
		var buf bytes.Buffer
		for _, l := range ls {
			buf.WriteString(l)
			if !strings.HasSuffix(l, "\n") {
				buf.WriteByte('\n')
			}
		}
		return buf.Bytes()
	}
	d := diff.Diff("a", fix(a), "b", fix(b))
	if len(d) == 0 {
		for i := range m {
			if i < len(b) {
				m[i] = i
			}
		}
		return m
	}
	out := strings.SplitAfter(string(d), "\n")
	if len(out) > 3 {
		out = out[3:]
	}
	pa, pb := 0, 0
	for _, s := range out {
		switch {
		case strings.HasPrefix(s, "@@ "):
			sa, sb := hunkStarts(s)
			for pa < sa && pb < sb {
				m[pa] = pb
				pa++
				pb++
			}
			pa, pb = sa, sb
		case strings.HasPrefix(s, " "):
			if pa < len(m) {
				m[pa] = pb
			}
			pa++
			pb++
		case strings.HasPrefix(s, "-"):
			pa++
		case strings.HasPrefix(s, "+"):
			pb++
		}
	}
	for pa < len(a) && pb < len(b) {
		m[pa] = pb
		pa++
		pb++
	}
	refine(a, b, m)
	return m
}

// refine matches the lines of the gaps the anchored diff leaves (it
// matches only around lines unique in both texts, so a block repeated in
// a document, such as a second pod template's env, becomes a deletion and
// an insertion) by a longest common subsequence, where the gap is small
// enough.
func refine(a, b []string, m []int) {
	ia, ib := 0, 0
	for ia <= len(a) {
		// The next matched line of a (or the end) closes a gap.
		ja := ia
		for ja < len(a) && m[ja] < 0 {
			ja++
		}
		jb := len(b)
		if ja < len(a) {
			jb = m[ja]
		}
		if ja > ia && jb > ib && (ja-ia)*(jb-ib) <= 1<<18 {
			lcs(a[ia:ja], b[ib:jb], m[ia:ja], ib)
		}
		if ja == len(a) {
			return
		}
		ia, ib = ja+1, jb+1
	}
}

// lcs sets m[i] = off+j for the lines a[i] == b[j] of a longest common
// subsequence.
func lcs(a, b []string, m []int, off int) {
	n, k := len(a), len(b)
	t := make([]int32, (n+1)*(k+1))
	at := func(i, j int) *int32 { return &t[i*(k+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := k - 1; j >= 0; j-- {
			switch {
			case a[i] == b[j]:
				*at(i, j) = *at(i+1, j+1) + 1
			case *at(i+1, j) >= *at(i, j+1):
				*at(i, j) = *at(i+1, j)
			default:
				*at(i, j) = *at(i, j+1)
			}
		}
	}
	for i, j := 0, 0; i < n && j < k; {
		switch {
		case a[i] == b[j]:
			m[i] = off + j
			i++
			j++
		case *at(i+1, j) >= *at(i, j+1):
			i++
		default:
			j++
		}
	}
}

// hunkStarts reads the 0-based first lines of "@@ -a,b +c,d @@".
func hunkStarts(header string) (int, int) {
	f := strings.Fields(header)
	parse := func(s string) int {
		start, count, _ := strings.Cut(s[1:], ",")
		a, _ := strconv.Atoi(start)
		if n, err := strconv.Atoi(count); err != nil || n > 0 {
			a--
		}
		return a
	}
	return parse(f[1]), parse(f[2])
}
