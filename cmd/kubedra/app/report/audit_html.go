package report

import (
	_ "embed"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/bundle"
)

//go:embed audit.html.tmpl
var auditPageSrc string

var auditPage = template.Must(template.New("audit").Funcs(template.FuncMap{
	"join":  strings.Join,
	"lower": strings.ToLower,
	"add1":  func(i int) int { return i + 1 },
}).Parse(auditPageSrc))

// Device modes of a pool on the map.
const (
	modePlugin = "plugin"
	modeBoth   = "both"
	modeDRA    = "DRA"
	modeNone   = "none"
)

type pagePool struct {
	audit.Pool
	Mode     string
	Conflict bool
	Findings []audit.Finding
	// Phase is the bundle's pool number ("" when the bundle has none).
	Phase int
}

type pageOwner struct {
	Ref      audit.Ref
	Resource string
	Status   string
	Pods     int
}

type pageData struct {
	R       *audit.Report
	Modes   []string
	ByMode  map[string][]pagePool
	Pools   []pagePool
	Global  []audit.Finding
	Owners  []pageOwner
	Bundle  *bundle.Manifest
	Partial []string
}

// AuditHTML writes r as one self-contained HTML page (inline CSS, no
// script, nothing fetched): node pools on a map of device modes (plugin,
// both, DRA, none) with conflicts marked and each pool's verdict, the
// checks, the findings per pool, the workloads still on device plugins by
// owner, and, when man is not nil, the bundle's phases.
func AuditHTML(w io.Writer, r *audit.Report, man *bundle.Manifest) error {
	d := pageData{R: r, Modes: []string{modePlugin, modeBoth, modeDRA, modeNone}, ByMode: map[string][]pagePool{}, Bundle: man, Partial: r.Unread()}
	phase := map[string]int{}
	if man != nil {
		for i, p := range man.Pools {
			phase[p.Name] = i + 1
		}
	}
	for _, p := range r.Pools {
		pp := pagePool{Pool: p, Mode: poolMode(p), Conflict: p.Verdict == audit.Conflicting, Phase: phase[p.Name]}
		for _, it := range r.Items {
			if it.Pool == p.Name {
				pp.Findings = append(pp.Findings, it)
			}
		}
		d.ByMode[pp.Mode] = append(d.ByMode[pp.Mode], pp)
		d.Pools = append(d.Pools, pp)
	}
	for _, it := range r.Items {
		if it.Pool == "" {
			d.Global = append(d.Global, it)
		}
	}
	for _, g := range r.Workloads {
		for _, o := range g.Objects {
			d.Owners = append(d.Owners, pageOwner{Ref: o, Resource: g.Resource, Status: string(g.Status)})
		}
	}
	slices.SortStableFunc(d.Owners, func(a, b pageOwner) int {
		return strings.Compare(a.Ref.Namespace+"/"+a.Ref.Kind+"/"+a.Ref.Name, b.Ref.Namespace+"/"+b.Ref.Kind+"/"+b.Ref.Name)
	})
	return auditPage.Execute(w, d)
}

func poolMode(p audit.Pool) string {
	switch {
	case len(p.Plugins) > 0 && len(p.Drivers) > 0:
		return modeBoth
	case len(p.Plugins) > 0:
		return modePlugin
	case len(p.Drivers) > 0:
		return modeDRA
	}
	return modeNone
}
