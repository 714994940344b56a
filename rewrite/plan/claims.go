package plan

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// claims plans the claim rewrite of one document.
func (b *builder) claims(d *doc, dp *DocPlan, pods []*pod) {
	dc := &docClaims{builder: b, first: pods[0].findings[0], dp: dp, distinct: distinctClaims(pods)}
	for _, pd := range pods {
		pe, ok := dc.planPod(pd)
		if !ok {
			return
		}
		dp.Pods = append(dp.Pods, pe)
	}
	b.addDoc(d, dp)
}

// docClaims plans the claims of one document's pod templates.
type docClaims struct {
	*builder
	first inventory.Finding // the document's first finding
	dp    *DocPlan
	// objects are the claim objects made for the document so far:
	// identical claims of one workload share one object.
	objects []madeClaim
	// distinct are the different claims of each claim name among the
	// workload's pod templates (distinctClaims).
	distinct map[string][]rules.Claim
}

// madeClaim is a claim and the name of the object made for it.
type madeClaim struct {
	claim   rules.Claim
	objName string
}

// distinctClaims are the different claims of each claim name among pods:
// a claim name whose claims differ between pod templates of this workload
// needs the pod template in the object name.
func distinctClaims(pods []*pod) map[string][]rules.Claim {
	distinct := map[string][]rules.Claim{}
	for _, pd := range pods {
		for _, c := range pd.res.Claims {
			if !slices.ContainsFunc(distinct[c.Name], func(o rules.Claim) bool { return sameClaim(o, c) }) {
				distinct[c.Name] = append(distinct[c.Name], c)
			}
		}
	}
	return distinct
}

// planPod plans the pod claims and container edits of one pod template;
// false when a claim could not be encoded (reported), which leaves the
// rest of the document unplanned.
func (dc *docClaims) planPod(pd *pod) (PodEdit, bool) {
	pe := PodEdit{Path: pd.findings[0].PodTemplatePath}
	podClaim := map[int]string{} // claim index -> pod claim name
	taken := takenClaims(pd)
	used := usedClaims(pd)
	for ci, c := range pd.res.Claims {
		if !used[ci] {
			continue
		}
		objName, ok := dc.object(pd, c)
		if !ok {
			return pe, false
		}
		pcName := podClaimName(taken, c.Name)
		pc := PodClaim{Name: pcName}
		if c.Shared {
			pc.ResourceClaimName = objName
		} else {
			pc.ResourceClaimTemplateName = objName
		}
		pe.ResourceClaims = append(pe.ResourceClaims, pc)
		podClaim[ci] = pcName
	}
	containerClaims(&pe, pd, podClaim)
	dc.removeHints(&pe, pd)
	return pe, true
}

// takenClaims are the pod claim names a pod template already has (a
// half-migrated pod): they are never reused.
func takenClaims(pd *pod) map[string]bool {
	taken := map[string]bool{}
	if w := pd.findings[0].Workload; w != nil {
		for _, n := range w.PodClaims {
			taken[n] = true
		}
	}
	return taken
}

// usedClaims are the claims of the pod template that a request
// references, by index.
func usedClaims(pd *pod) map[int]bool {
	used := map[int]bool{}
	for i := range pd.findings {
		for _, ref := range refs(decision(pd.res, i)) {
			used[ref.Claim] = true
		}
	}
	return used
}

// podClaimName is the pod claim name for claim name: the rules' unless
// taken, then name-2, name-3...; it marks the name taken.
func podClaimName(taken map[string]bool, name string) string {
	pcName := name
	for n := 2; taken[pcName]; n++ {
		pcName = rules.DNSLabel(fmt.Sprintf("%s-%d", name, n), "device")
	}
	taken[pcName] = true
	return pcName
}

// object is the name of the object that serves claim c of a pod template:
// the one made for an identical claim of the workload, else a new one,
// encoded unless an earlier workload wrote it (a shared claim); false when
// encoding failed (reported).
func (dc *docClaims) object(pd *pod, c rules.Claim) (string, bool) {
	// Identical claims of one workload share one object.
	objName := ""
	for _, m := range dc.objects {
		if sameClaim(m.claim, c) {
			objName = m.objName
		}
	}
	if objName != "" {
		return objName, true
	}
	kind := "ResourceClaimTemplate"
	if c.Shared {
		kind = "ResourceClaim"
	}
	write := true
	if c.Shared && pd.namespaces != nil {
		for _, f := range pd.findings {
			dc.diag(inventory.Warning, RuleClusterScoped, f, "left unchanged: a shared ResourceClaim for a cluster-scoped runtime would be one claim per namespace of its users, shared by all their pods: kubedra does not write that", "map the sharing to per-pod claims (drop --share), or give each namespace a namespaced copy of the runtime")
		}
		return "", false
	}
	if c.Shared {
		objName, write = dc.sharedName(dc.first, c, kind)
	} else {
		objName = dc.templateName(dc.first, pd, c, kind, len(dc.distinct[c.Name]))
	}
	dc.objects = append(dc.objects, madeClaim{claim: c, objName: objName})
	if !write {
		return objName, true
	}
	namespaces := []string{dc.first.Namespace}
	if pd.namespaces != nil {
		namespaces = pd.namespaces
	}
	for _, ns := range namespaces {
		n, err := dc.encode(objName, ns, c)
		if err == nil && !c.Shared {
			err = helmHook(n, dc.first.Workload)
		}
		if err != nil {
			for _, f := range pd.findings {
				dc.diag(inventory.Error, RuleEncode, f, "left unchanged: encoding the claim: "+err.Error(), "")
			}
			return "", false
		}
		dc.dp.Objects = append(dc.dp.Objects, &Object{Kind: kind, Name: objName, Namespace: ns, Node: n})
	}
	return objName, true
}

// sharedName names the object of shared claim c, and reports whether this
// workload writes it (no earlier one of its namespace and scope did).
func (b *builder) sharedName(first inventory.Finding, c rules.Claim, kind string) (objName string, write bool) {
	// A shared claim is shared by every pod of the namespace
	// that asks for it, across workloads: one object per
	// namespace and naming scope (a kustomization or folder),
	// named after the claim, not the workload.
	raw, _ := json.Marshal(c)
	owner := "shared\x00" + first.Namespace + "\x00" + string(raw)
	want := c.Name
	if b.patch != "" {
		// The base's shared claim is in the overlay's build too.
		want += "-" + b.patchQualifier()
	}
	objName = b.name(inventory.ObjectRef{Kind: kind, Namespace: first.Namespace, Name: want}, owner, "shared")
	unit := nameKey(b.scope, kind, first.Namespace, objName)
	write = !b.sharedMade[unit]
	b.sharedMade[unit] = true
	return objName, write
}

// templateName names the claim template of claim c of a pod template:
// after the workload, and after the pod template too when the workload
// has several variants (different claims) of that claim name.
func (b *builder) templateName(first inventory.Finding, pd *pod, c rules.Claim, kind string, variants int) string {
	// A generateName ("job-") is a prefix: keep one dash.
	wl := strings.TrimRight(first.Name, "-")
	if b.patch != "" {
		// The base's template of the same workload is in the
		// same build: the overlay's folder tells them apart.
		wl += "-" + b.patchQualifier()
	}
	base := wl + "-" + c.Name
	if variants > 1 {
		if q := qualifier(pd.findings[0].PodTemplatePath); q != "" {
			base = wl + "-" + q + "-" + c.Name
		}
	}
	return b.name(inventory.ObjectRef{Kind: kind, Namespace: first.Namespace, Name: base}, b.ownerKey(pd.findings[0])+"\x00"+c.Name, first.Kind)
}

// containerClaims edits the containers of a pod template, in order of
// appearance: each loses its migrated requests and references its claims.
func containerClaims(pe *PodEdit, pd *pod, podClaim map[int]string) {
	at := map[containerKey]int{} // pe.Containers by container
	for i, c := range pe.Containers {
		at[containerKey{c.Type, c.Index, c.Name}] = i
	}
	for i, f := range pd.findings {
		dec := decision(pd.res, i)
		if dec.Zero {
			ce := containerEdit(pe, at, f)
			if !slices.Contains(ce.Remove, f.Resource) {
				ce.Remove = append(ce.Remove, f.Resource)
			}
			continue
		}
		if dec.Claim < 0 || dec.Claim >= len(pd.res.Claims) {
			continue
		}
		ce := containerEdit(pe, at, f)
		if !slices.Contains(ce.Remove, f.Resource) {
			ce.Remove = append(ce.Remove, f.Resource)
		}
		for _, ref := range refs(dec) {
			cc := ContainerClaim{Name: podClaim[ref.Claim]}
			if len(pd.res.Claims[ref.Claim].Spec.Devices.Requests) > 1 {
				cc.Request = ref.Request
			}
			if !slices.Contains(ce.Claims, cc) {
				ce.Claims = append(ce.Claims, cc)
			}
		}
	}
}

// removeHints drops the node-selector hints that became device selectors,
// unless --keep-node-selectors.
func (b *builder) removeHints(pe *PodEdit, pd *pod) {
	if !b.opts.KeepNodeSelectors {
		hints := pd.findings[0].Hints
		for _, h := range pd.res.UsedHints {
			if h >= 0 && h < len(hints) {
				pe.RemoveHints = append(pe.RemoveHints, hints[h])
			}
		}
	}
}

// addDoc adds a planned document to its file's plan, and says where the
// file's new objects go.
func (b *builder) addDoc(d *doc, dp *DocPlan) {
	fp := b.res.Plan
	if fp == nil {
		fp = &FilePlan{Path: d.file}
		b.res.Plan = fp
	}
	fp.Docs = append(fp.Docs, dp)
	b.keepMaps(d.file, dp)
	if d.file != "-" && d.file != "" && len(dp.Objects) > 0 {
		name := b.opts.ClaimsFile
		if name == "" && strings.EqualFold(filepath.Ext(d.file), ".json") {
			// A JSON file holds one object: new objects go beside it.
			name = strings.TrimSuffix(filepath.Base(d.file), filepath.Ext(d.file)) + "-claims.yaml"
		}
		switch {
		case b.patch != "":
			fp.ClaimsFile = filepath.Join(filepath.Dir(b.patch), or(name, PatchClaimsFile))
			fp.Kustomization = b.patch
		case name != "":
			dir := filepath.Dir(d.file)
			fp.ClaimsFile = filepath.Join(dir, name)
			if b.opts.Kustomization != nil {
				fp.Kustomization = b.opts.Kustomization(dir)
			}
		}
	}
}

// keepMaps marks the limits and requests maps of dp's containers that a
// kustomize JSON 6902 patch reaching the file adds into: kept when they
// become empty, so that the add still finds its parent.
func (b *builder) keepMaps(file string, dp *DocPlan) {
	if b.opts.MapAdds == nil {
		return
	}
	adds := b.opts.MapAdds(file)
	for _, pe := range dp.Pods {
		for i := range pe.Containers {
			c := &pe.Containers[i]
			for _, a := range adds {
				if (a.Kind == "" || a.Kind == dp.Kind) && a.Index == c.Index && a.Init == (c.Type == inventory.InitContainer) && !slices.Contains(c.Keep, a.Field) {
					c.Keep = append(c.Keep, a.Field)
				}
			}
		}
	}
}

// refs are the (claim, request) pairs a decision's container references.
func refs(d rules.Decision) []rules.ClaimRef {
	if len(d.Refs) > 0 {
		return d.Refs
	}
	return []rules.ClaimRef{{Claim: d.Claim, Request: d.Request}}
}

// sameClaim reports whether two claims are the same claim (one object serves both).
func sameClaim(a, b rules.Claim) bool {
	return a.Shared == b.Shared && a.Name == b.Name && reflect.DeepEqual(a.Spec, b.Spec)
}

// encodedKey tells encoded claims apart.
type encodedKey struct {
	shared, namespaced bool
	claim              string // the claim's JSON
}

// placeholder names an encoded claim until it is copied for a workload.
const placeholder = "kubedra-placeholder"

// encode returns the claim template (or shared claim) for c named name in
// namespace: a copy of the one encoded for an equal claim, renamed.
func (b *builder) encode(name, namespace string, c rules.Claim) (*yaml.RNode, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	k := encodedKey{shared: c.Shared, namespaced: namespace != "", claim: string(raw)}
	n, ok := b.encoded[k]
	if !ok {
		enc := b.opts.Encoder.ClaimTemplate
		if c.Shared {
			enc = b.opts.Encoder.Claim
		}
		ns := ""
		if namespace != "" {
			ns = placeholder
		}
		if n, err = enc(placeholder, ns, c, b.opts.Target); err != nil {
			return nil, err
		}
		b.encoded[k] = n
	}
	out := n.Copy()
	meta := out.Field(yaml.MetadataField)
	if meta == nil || meta.Value.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the encoded claim for %s has no metadata", name)
	}
	// The placeholders are the copy's own scalars: set them in place (a
	// kyaml setter decodes each value with yaml.v2 to decide its quoting).
	inventory.SetString(meta.Value.YNode(), yaml.NameField, name)
	if namespace != "" {
		inventory.SetString(meta.Value.YNode(), yaml.NamespaceField, namespace)
	}
	return out, nil
}

// containerKey is a container of a pod template: its list, index and name.
type containerKey struct {
	typ   inventory.ContainerType
	index int
	name  string
}

// containerEdit is the edit of a finding's container in pe, added when new;
// at indexes pe.Containers (a pod of 10,000 containers made a search for
// each a quadratic walk).
func containerEdit(pe *PodEdit, at map[containerKey]int, f inventory.Finding) *ContainerEdit {
	k := containerKey{f.ContainerType, f.ContainerIndex, f.Container}
	if i, ok := at[k]; ok {
		return &pe.Containers[i]
	}
	pe.Containers = append(pe.Containers, ContainerEdit{Type: f.ContainerType, Name: f.Container, Index: f.ContainerIndex,
		Remove: []string{}, Claims: []ContainerClaim{}})
	at[k] = len(pe.Containers) - 1
	return &pe.Containers[len(pe.Containers)-1]
}

// qualifier turns the part of a pod template path that tells several pod
// templates of one workload apart (spec.pytorchReplicaSpecs.Worker.template.spec
// -> "worker") into a name part.
func qualifier(path string) string {
	parts := splitPath(path)
	var keep []string
	for _, p := range parts {
		switch p {
		case "spec", "template", "jobTemplate":
			continue
		}
		keep = append(keep, p)
	}
	if len(keep) == 0 {
		return ""
	}
	// The most specific part: the replica name or list index.
	return rules.DNSSubdomain(keep[len(keep)-1], 40, "workload")
}

// splitPath splits a kyaml field path on unescaped dots, dropping list
// indexes.
func splitPath(path string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '\\' && i+1 < len(path):
			i++
			cur.WriteByte(path[i])
		case c == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	parts = append(parts, cur.String())
	for i, p := range parts {
		if j := strings.IndexByte(p, '['); j > 0 {
			idx := strings.Trim(p[j:], "[]")
			if _, v, ok := strings.Cut(idx, "="); ok {
				idx = v // [name=gpu-group] -> gpu-group
			}
			parts[i] = p[:j] + "-" + idx
		}
	}
	return parts
}
