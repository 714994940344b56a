package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// Names of new objects are a function of the object and its place in the
// repository, never of where the repository is checked out or of what
// else is in the run:
//
//   - the hash that tells owners apart is taken over the file's path
//     relative to its input root (Options.Place), the document index, the
//     pod template path and the claim name;
//   - two objects compete for a name only when they would be applied
//     together: the same kind and namespace in the same scope, the folder
//     of the nearest kustomization at or above the file (within its input
//     root), else the file's folder. Objects reserved without a file
//     (Reserve) compete in every scope.

// MaxNameLength is the longest object name (a DNS subdomain).
const MaxNameLength = rules.MaxSubdomainLength

// owner identifies who took a name: the first bytes of a SHA-256 of the
// pod template and claim (16 bytes keep the Planner's memory small on runs
// that make hundreds of thousands of objects).
type owner [16]byte

// existing owns the names of objects that are in the input.
var existing = owner{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func nameKey(scope, kind, namespace, name string) string {
	return scope + "\x00" + kind + "\x00" + namespace + "\x00" + name
}

// anyScope is the scope of names reserved without a file.
const anyScope = "\x01"

// Reserve marks objects that exist in the input as taken in every scope:
// new names never collide with them.
func (p *Planner) Reserve(refs ...inventory.ObjectRef) {
	p.reserve(anyScope, refs)
}

// ReserveIn marks objects of the file at path as taken in its scope.
func (p *Planner) ReserveIn(path string, refs ...inventory.ObjectRef) {
	p.reserve(p.scopeOf(path), refs)
}

func (p *Planner) reserve(scope string, refs []inventory.ObjectRef) {
	for _, o := range refs {
		if k := nameKey(scope, o.Kind, o.Namespace, o.Name); p.names[k] == (owner{}) {
			p.names[k] = existing
		}
	}
}

// placeOf is the file's path relative to its input root, with slashes.
func (p *Planner) placeOf(file string) string {
	if p.opts.Place != nil {
		if rel := p.opts.Place(file); rel != "" {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(file)
}

// scopeOf is the naming scope of the file at path: the folder of the
// nearest kustomization at or above it within its input root, else its
// folder.
func (p *Planner) scopeOf(file string) string {
	dir := filepath.Dir(file)
	if s, ok := p.scopes[dir]; ok {
		return s
	}
	scope := dir
	if p.opts.Kustomization != nil && file != "-" && file != "" {
		// The folders between the file and its input root.
		up := strings.Count(path.Dir(p.placeOf(file)), "/")
		if path.Dir(p.placeOf(file)) != "." {
			up++
		}
		if p.opts.Place == nil {
			up = 0
		}
		d := dir
		for i := 0; i <= up; i++ {
			if p.opts.Kustomization(d) != "" {
				scope = d
				break
			}
			d = filepath.Dir(d)
		}
	}
	p.scopes[dir] = scope
	return scope
}

// ownerKey identifies the pod template of a finding by its place in the
// repository (Key uses the path as read).
func (b *builder) ownerKey(f inventory.Finding) string {
	return b.place + "\x00" + strconv.Itoa(f.Origin.Index) + "\x00" + f.PodTemplatePath
}

// name returns a free, valid object name close to want.Name and reserves
// it for by in the file's scope. A name taken by another owner gets the
// workload kind, then a hash of the owner, appended.
func (b *builder) name(want inventory.ObjectRef, by, kind string) string {
	base := rules.DNSSubdomain(want.Name, MaxNameLength, "workload")
	candidates := []string{base, rules.DNSSubdomain(want.Name+"-"+strings.ToLower(kind), MaxNameLength, "workload")}
	h := sha256.Sum256([]byte(by))
	var o owner
	copy(o[:], h[:])
	candidates = append(candidates, rules.DNSSubdomain(want.Name+"-"+hex.EncodeToString(h[:4]), MaxNameLength, "workload"))
	for i := 0; ; i++ {
		var c string
		if i < len(candidates) {
			c = candidates[i]
		} else {
			c = rules.DNSSubdomain(fmt.Sprintf("%s-%d", want.Name, i), MaxNameLength, "workload")
		}
		if taken, ok := b.names[nameKey(anyScope, want.Kind, want.Namespace, c)]; ok && taken != o {
			continue
		}
		k := nameKey(b.scope, want.Kind, want.Namespace, c)
		if taken, ok := b.names[k]; !ok || taken == o {
			b.names[k] = o
			return c
		}
	}
}
