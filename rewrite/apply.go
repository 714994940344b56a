package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// Edited is one document root the plan changed, with the new objects that
// follow it (for a `kind: List` with inline objects, they are items of
// the List already).
type Edited struct {
	Root    *yaml.Node
	Objects []*yaml.RNode
	span    inventory.Span
	line    int
	index   int // the index of the first document of the root
	// replace, when set, makes the document's new text from its old one
	// (a document an upgrade removes); removed says so for documents
	// without text.
	replace func(old []byte) []byte
	removed bool
	before  *yaml.Node // Root before the edit
	moved   []string   // comments the edit moved from Root to its new objects
}

// batch is one FilePlan being applied to the documents it was made for:
// the one applier of File (documents with text) and Documents (without).
// It finds documents by index, keeps one Edited per document root (the
// items of a List share their List's), and the roots that failed.
type batch struct {
	docs    []*inventory.Document
	byIndex map[int]*inventory.Document
	byRoot  map[*yaml.Node]*Edited
	edited  []*Edited
	failed  map[*yaml.Node]*Failure
	order   []*yaml.Node // failed roots, in the order they failed
}

func newBatch(docs []*inventory.Document) *batch {
	b := &batch{docs: docs, byIndex: make(map[int]*inventory.Document, len(docs)), byRoot: map[*yaml.Node]*Edited{}, failed: map[*yaml.Node]*Failure{}}
	for _, d := range docs {
		b.byIndex[d.Origin.Index] = d
	}
	return b
}

// applyPlan applies the device edits, then the DRA upgrades, then the
// governance edits of fp. It returns the edited roots in file order,
// without those that failed; a document that cannot be edited is a
// Failure (the others are edited), and err is for a plan that does not
// fit the documents at all. When inline is set, new objects of a List
// item become items of the List right after it; otherwise they are
// returned with their root.
func applyPlan(docs []*inventory.Document, fp *plan.FilePlan, inline bool) ([]*Edited, []Failure, error) {
	b := newBatch(docs)
	if err := b.devices(fp.Docs, inline); err != nil {
		return nil, nil, err
	}
	if err := b.upgrades(fp.Upgrades); err != nil {
		return nil, nil, err
	}
	if err := b.governs(fp.Governance); err != nil {
		return nil, nil, err
	}
	return b.result(fp)
}

// doc returns the document at index and its root; line is the plan's,
// for the error when the plan does not fit the documents.
func (b *batch) doc(index, line int) (*inventory.Document, *yaml.Node, error) {
	d := b.byIndex[index]
	if d == nil {
		return nil, nil, inventory.AtLine(line, fmt.Errorf("no document %d there", index))
	}
	if d.Root != nil {
		return d, d.Root, nil
	}
	return d, d.Node.YNode(), nil
}

// fail records that root cannot be edited (the first reason counts).
func (b *batch) fail(root *yaml.Node, line int, err error) {
	if b.failed[root] == nil {
		b.failed[root] = &Failure{Line: line, Err: err}
		b.order = append(b.order, root)
	}
}

// edit returns the Edited of d's root, starting it (after the duplicate-key
// guard) when nothing edited the root yet; nil when the root failed.
// spliced keeps the node as it was, so that only the lines the edit needs
// change in the text (splice.go).
func (b *batch) edit(d *inventory.Document, root *yaml.Node, spliced bool) *Edited {
	if b.failed[root] != nil {
		return nil
	}
	if e := b.byRoot[root]; e != nil {
		return e
	}
	if err := duplicateKeys(root); err != nil {
		b.fail(root, d.Origin.Line, err)
		return nil
	}
	if err := mergeKeys(root); err != nil {
		b.fail(root, d.Origin.Line, err)
		return nil
	}
	e := &Edited{Root: root, span: d.Span, line: d.Origin.Line, index: d.Origin.Index}
	if spliced {
		e.before = yaml.CopyYNode(root)
	}
	b.byRoot[root] = e
	b.edited = append(b.edited, e)
	return e
}

// devices applies the workloads' DocPlans.
func (b *batch) devices(dps []*plan.DocPlan, inline bool) error {
	edits := map[*yaml.Node]int{}
	for _, dp := range dps {
		d, root, err := b.doc(dp.Index, dp.Line)
		if err != nil {
			return err
		}
		e := b.edit(d, root, true)
		if e == nil {
			continue
		}
		var hintNotes []string
		for _, pe := range dp.Pods {
			hintNotes = append(hintNotes, hintComments(d.Node.YNode(), pe.RemoveHints)...)
		}
		if err := Document(d.Node, dp); err != nil {
			b.fail(root, d.Origin.Line, inventory.AtLine(dp.Line, err))
			continue
		}
		edits[root]++
		items := listOf(root)
		if items == nil && edits[root] > 1 {
			return inventory.AtLine(dp.Line, fmt.Errorf("%d edits for one document", edits[root]))
		}
		if items != nil && inline {
			// New objects become items right after the workload.
			idx := slices.Index(items.Content, d.Node.YNode())
			if idx < 0 {
				return inventory.AtLine(dp.Line, errors.New("no list item there"))
			}
			var add []*yaml.Node
			for _, o := range dp.Objects {
				add = append(add, yaml.CopyYNode(o.Node.YNode()))
			}
			e.moved = append(e.moved, moveHintComments(add, hintNotes)...)
			items.Content = slices.Insert(items.Content, idx+1, add...)
			continue
		}
		objs := nodes(dp.Objects)
		var ys []*yaml.Node
		for _, o := range objs {
			ys = append(ys, o.YNode())
		}
		e.moved = append(e.moved, moveHintComments(ys, hintNotes)...)
		e.Objects = append(e.Objects, objs...)
	}
	return nil
}

// upgrades applies the DRA upgrades. A removed document becomes its
// comment; a removed list item leaves its List.
func (b *batch) upgrades(ups []*plan.Upgrade) error {
	for _, u := range ups {
		d, root, err := b.doc(u.Index, u.Line)
		if err != nil {
			return err
		}
		e := b.edit(d, root, false)
		if e == nil {
			continue
		}
		if u.Remove == "" {
			if err := Upgrade(d.Node, u); err != nil {
				b.fail(root, d.Origin.Line, inventory.AtLine(u.Line, err))
			}
			continue
		}
		if items := listOf(root); items != nil {
			i := slices.Index(items.Content, d.Node.YNode())
			if i < 0 {
				return inventory.AtLine(u.Line, errors.New("no list item there"))
			}
			items.Content = slices.Delete(items.Content, i, i+1)
			continue
		}
		e.removed, e.replace = true, commentOut(u.Remove)
	}
	return nil
}

// commentOut makes the text of a document an upgrade removes: its own
// leading comments, then comment (what it was and why it went).
func commentOut(comment string) func(old []byte) []byte {
	return func(old []byte) []byte {
		_, trail := trimTrailing(old)
		var b []byte
		if bytes.HasPrefix(old, []byte("---")) {
			b = append(b, "---\n"...)
			old = old[bytes.IndexByte(old, '\n')+1:]
		}
		for len(old) > 0 && bytes.HasPrefix(bytes.TrimLeft(old, " "), []byte("#")) {
			i := bytes.IndexByte(old, '\n')
			if i < 0 {
				break
			}
			b, old = append(b, old[:i+1]...), old[i+1:]
		}
		return append(append(b, comment...), trail...)
	}
}

// governs applies the governance edits.
func (b *batch) governs(ges []*plan.GovEdit) error {
	for _, g := range ges {
		d, root, err := b.doc(g.Index, g.Line)
		if err != nil {
			return err
		}
		if e := b.edit(d, root, true); e == nil {
			continue
		}
		if err := Govern(d.Node, g); err != nil {
			b.fail(root, d.Origin.Line, inventory.AtLine(g.Line, err))
		}
	}
	return nil
}

// result is the edited roots in file order, checked for aliases, and the
// failures, each with the plan's workloads and objects it held back.
func (b *batch) result(fp *plan.FilePlan) ([]*Edited, []Failure, error) {
	slices.SortStableFunc(b.edited, func(x, y *Edited) int { return x.span.Start - y.span.Start })
	kept := b.edited[:0]
	for _, e := range b.edited {
		if b.failed[e.Root] != nil {
			continue // a later edit of the root, or of an item of its List, failed
		}
		if err := checkAliases(e.Root); err != nil {
			b.fail(e.Root, e.line, err)
			continue
		}
		kept = append(kept, e)
	}
	var failures []Failure
	for _, r := range b.order {
		f := *b.failed[r]
		f.Index = -1
		for _, d := range b.docs {
			if d.Root == r || d.Root == nil && d.Node.YNode() == r {
				f.Index = d.Origin.Index
				break
			}
		}
		for _, dp := range fp.Docs {
			if d := b.byIndex[dp.Index]; d != nil && (d.Root == r || d.Root == nil && d.Node.YNode() == r) {
				f.Workloads++
				f.Objects += len(dp.Objects)
			}
		}
		failures = append(failures, f)
	}
	return kept, failures, nil
}

// Applied is a FilePlan applied to documents without text.
type Applied struct {
	// Objects are the new objects that follow each edited document, by
	// the document's index (those of a List item are in the List).
	Objects map[int][]*yaml.RNode
	// Removed are the indexes of the documents a DRA upgrade removes.
	Removed map[int]bool
	// Failures are the documents the plan could not be applied to; their
	// nodes may be half edited, so the caller keeps the originals.
	Failures []Failure
}

// Documents applies fp to documents without text (a KRM function's items,
// a chart's render), editing their nodes in place: the same applier, the
// same guards and the same failures as File. An error is for a plan that
// does not fit the documents at all.
func Documents(docs []*inventory.Document, fp *plan.FilePlan) (Applied, error) {
	out := Applied{Objects: map[int][]*yaml.RNode{}, Removed: map[int]bool{}}
	if fp == nil {
		return out, nil
	}
	edited, failures, err := applyPlan(docs, fp, true)
	if err != nil {
		return out, err
	}
	for _, e := range edited {
		if e.removed {
			out.Removed[e.index] = true
			continue
		}
		if len(e.Objects) > 0 {
			out.Objects[e.index] = e.Objects
		}
	}
	out.Failures = failures
	return out, nil
}
