package plan_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rewrite/plan/plantest"
	"github.com/kubedra/kubedra/rules"
)

func finding(file string, index int, kind, name, ns, path, container string, ctype inventory.ContainerType, res, qty string) inventory.Finding {
	return inventory.Finding{Origin: inventory.Origin{Path: file, Index: index, ListIndex: -1}, Line: 10 + index, Kind: kind, APIVersion: "apps/v1",
		Name: name, Namespace: ns, PodTemplatePath: path, Container: container, ContainerType: ctype, Resource: res, Limit: qty}
}

func opts(s plan.Strategy) plan.Options {
	return plan.Options{Strategy: s, Target: rules.Version{Major: 1, Minor: 34}, Encoder: plantest.Encoder{}}
}

func objectNames(p *plan.Plan) []string {
	var out []string
	for _, f := range p.Files {
		for _, d := range f.Docs {
			for _, o := range d.Objects {
				out = append(out, o.Kind+"/"+o.Name)
			}
		}
	}
	return out
}

func TestBuildNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("very-long-name-", 20)
	tests := []struct {
		name     string
		findings []inventory.Finding
		existing []inventory.ObjectRef
		want     []string
	}{
		{
			name:     "from the workload and the claim",
			findings: []inventory.Finding{finding("a.yaml", 0, "Deployment", "trainer", "ml", "spec.template.spec", "cuda", inventory.Container, "nvidia.com/gpu", "2")},
			want:     []string{"ResourceClaimTemplate/trainer-gpu"},
		},
		{
			name: "two workloads with one name get distinct names",
			findings: []inventory.Finding{
				finding("a.yaml", 0, "Deployment", "trainer", "ml", "spec.template.spec", "cuda", inventory.Container, "nvidia.com/gpu", "1"),
				finding("a.yaml", 1, "Job", "trainer", "ml", "spec.template.spec", "cuda", inventory.Container, "nvidia.com/gpu", "1"),
			},
			want: []string{"ResourceClaimTemplate/trainer-gpu", "ResourceClaimTemplate/trainer-gpu-job"},
		},
		{
			name: "other namespaces do not collide",
			findings: []inventory.Finding{
				finding("a.yaml", 0, "Deployment", "trainer", "a", "spec.template.spec", "cuda", inventory.Container, "nvidia.com/gpu", "1"),
				finding("a.yaml", 1, "Deployment", "trainer", "b", "spec.template.spec", "cuda", inventory.Container, "nvidia.com/gpu", "1"),
			},
			want: []string{"ResourceClaimTemplate/trainer-gpu", "ResourceClaimTemplate/trainer-gpu"},
		},
		{
			name:     "existing objects are avoided",
			findings: []inventory.Finding{finding("a.yaml", 0, "Deployment", "trainer", "ml", "spec.template.spec", "cuda", inventory.Container, "nvidia.com/gpu", "1")},
			existing: []inventory.ObjectRef{{Kind: "ResourceClaimTemplate", Namespace: "ml", Name: "trainer-gpu"}},
			want:     []string{"ResourceClaimTemplate/trainer-gpu-deployment"},
		},
		{
			name: "identical claims of one workload are shared",
			findings: []inventory.Finding{
				finding("a.yaml", 0, "PyTorchJob", "pt", "", "spec.pytorchReplicaSpecs.Master.template.spec", "pytorch", inventory.Container, "nvidia.com/gpu", "1"),
				finding("a.yaml", 0, "PyTorchJob", "pt", "", "spec.pytorchReplicaSpecs.Worker.template.spec", "pytorch", inventory.Container, "nvidia.com/gpu", "1"),
			},
			want: []string{"ResourceClaimTemplate/pt-gpu"},
		},
		{
			name: "different claims of one workload are told apart by pod template",
			findings: []inventory.Finding{
				finding("a.yaml", 0, "PyTorchJob", "pt", "", "spec.pytorchReplicaSpecs.Master.template.spec", "pytorch", inventory.Container, "nvidia.com/gpu", "1"),
				finding("a.yaml", 0, "PyTorchJob", "pt", "", "spec.pytorchReplicaSpecs.Worker.template.spec", "pytorch", inventory.Container, "nvidia.com/gpu", "8"),
			},
			want: []string{"ResourceClaimTemplate/pt-master-gpu", "ResourceClaimTemplate/pt-worker-gpu"},
		},
		{
			name:     "long and odd names are shortened and stay valid",
			findings: []inventory.Finding{finding("a.yaml", 0, "Deployment", "Big_"+long, "", "spec.template.spec", "c", inventory.Container, "nvidia.com/gpu", "1")},
			want:     nil, // checked below
		},
	}
	dns := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := opts(plan.Claims)
			o.Existing = tt.existing
			p, err := plan.Build(tt.findings, plantest.Resolver{}, o)
			if err != nil {
				t.Fatal(err)
			}
			got := objectNames(p)
			for _, n := range got {
				name := n[strings.IndexByte(n, '/')+1:]
				if len(name) > plan.MaxNameLength || !dns.MatchString(name) {
					t.Errorf("invalid name %q", name)
				}
			}
			if tt.want == nil {
				if len(got) != 1 {
					t.Fatalf("got %v", got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			// Deterministic: the same input gives the same plan.
			p2, _ := plan.Build(tt.findings, plantest.Resolver{}, o)
			if diff := cmp.Diff(got, objectNames(p2)); diff != "" {
				t.Errorf("second build differs:\n%s", diff)
			}
		})
	}
}

func TestCheckStrategy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s       plan.Strategy
		minor   int
		force   bool
		wantErr string
	}{
		{plan.Claims, 32, false, ""},
		{plan.Auto, 34, false, ""},
		{plan.ExtendedResource, 36, false, ""},
		{plan.ExtendedResource, 37, false, ""},
		{plan.ExtendedResource, 35, false, "off by default"},
		{plan.ExtendedResource, 35, true, ""},
		{plan.ExtendedResource, 33, true, "does not have"},
		{"sideways", 34, false, "unknown strategy"},
	}
	for _, tt := range tests {
		err := plan.CheckStrategy(tt.s, rules.Version{Major: 1, Minor: tt.minor}, tt.force)
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("CheckStrategy(%s, 1.%d, force=%v) = %v, want %q", tt.s, tt.minor, tt.force, err, tt.wantErr)
		}
	}
}

func TestBuildStrategy(t *testing.T) {
	t.Parallel()
	plain := finding("a.yaml", 0, "Deployment", "plain", "", "spec.template.spec", "c", inventory.Container, "nvidia.com/gpu", "1")
	pinned := finding("a.yaml", 1, "Deployment", "pinned", "", "spec.template.spec", "c", inventory.Container, "nvidia.com/gpu", "1")
	pinned.Hints = []inventory.Hint{{Kind: inventory.HintNodeSelector, Key: "nvidia.com/gpu.product", Values: []string{"A100"}, Path: `spec.template.spec.nodeSelector.nvidia\.com/gpu\.product`}}
	tests := []struct {
		name      string
		strategy  plan.Strategy
		minor     int
		wantDocs  int
		wantDC    int
		wantWhy   []string
		wantDiags int
	}{
		{"claims rewrites both", plan.Claims, 36, 2, 0, nil, 0},
		{"auto on 1.36 keeps the plain one", plan.Auto, 36, 1, 1, []string{"extended-resource: only a count", "claims: a claim is needed for device selectors from node labels"}, 0},
		{"auto on 1.34 rewrites both", plan.Auto, 34, 2, 0, []string{"claims: only a count is needed, but DRAExtendedResource is off", "claims: a claim is needed for device selectors from node labels"}, 0},
		{"extended-resource leaves the pinned one and says so", plan.ExtendedResource, 37, 0, 1, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := opts(tt.strategy)
			o.Target = rules.Version{Major: 1, Minor: tt.minor}
			p, err := plan.Build([]inventory.Finding{plain, pinned}, plantest.Resolver{}, o)
			if err != nil {
				t.Fatal(err)
			}
			docs := 0
			for _, f := range p.Files {
				docs += len(f.Docs)
			}
			if docs != tt.wantDocs || len(p.DeviceClasses) != tt.wantDC || len(p.Diagnostics) != tt.wantDiags {
				t.Errorf("docs=%d deviceClasses=%d diags=%d, want %d %d %d (%+v)", docs, len(p.DeviceClasses), len(p.Diagnostics), tt.wantDocs, tt.wantDC, tt.wantDiags, p.Diagnostics)
			}
			var why []string
			for _, w := range p.Workloads {
				why = append(why, string(w.Strategy)+": "+w.Why)
			}
			if len(why) != len(tt.wantWhy) {
				t.Fatalf("why = %q, want %q", why, tt.wantWhy)
			}
			for i := range why {
				if !strings.HasPrefix(why[i], tt.wantWhy[i]) {
					t.Errorf("why[%d] = %q, want prefix %q", i, why[i], tt.wantWhy[i])
				}
			}
		})
	}
}

func TestBuildDecisions(t *testing.T) {
	t.Parallel()
	ignored := finding("a.yaml", 3, "Job", "skip", "", "spec.template.spec", "c", inventory.Container, "nvidia.com/gpu", "1")
	ignored.Ignore = "runs on the old pool until Q3"
	generic := finding("a.yaml", 4, "Widget", "w", "", "spec.stuff", "c", inventory.Container, "nvidia.com/gpu", "1")
	generic.Generic = true
	fs := []inventory.Finding{
		finding("a.yaml", 0, "Job", "lossy", "", "spec.template.spec", "c", inventory.Container, "example.com/lossy", "1"),
		finding("a.yaml", 1, "Job", "unmapped", "", "spec.template.spec", "c", inventory.Container, "fpga.example.org/x", "1"),
		finding("a.yaml", 2, "Job", "shell", "", "spec.template.spec", "c", inventory.Container, "nvidia.com/gpu", "$GPUS"),
		ignored, generic,
	}
	tests := []struct {
		name      string
		allow     bool
		wantDocs  int
		wantDiags []string
	}{
		{"without --allow-lossy nothing moves", false, 0, []string{
			"warning a.yaml:10 lossy: left unchanged: the mapping is lossy",
			"warning a.yaml:11 unmapped: left unchanged: no rule for fpga.example.org/x",
			"warning a.yaml:12 shell: left unchanged: quantity \"$GPUS\"",
			"info a.yaml:13 skip: ignored: runs on the old pool",
			"warning a.yaml:14 w: Widget.apps is not a known workload kind",
		}},
		{"with --allow-lossy the lossy one moves, with a warning", true, 1, []string{
			"warning a.yaml:10 lossy: lossy mapping applied (--allow-lossy): fractions",
			"warning a.yaml:11 unmapped:", "warning a.yaml:12 shell:", "info a.yaml:13 skip:", "warning a.yaml:14 w:",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := opts(plan.Claims)
			o.AllowLossy = tt.allow
			p, err := plan.Build(fs, plantest.Resolver{}, o)
			if err != nil {
				t.Fatal(err)
			}
			docs := 0
			for _, f := range p.Files {
				docs += len(f.Docs)
			}
			if docs != tt.wantDocs {
				t.Errorf("docs = %d, want %d", docs, tt.wantDocs)
			}
			if len(p.Diagnostics) != len(tt.wantDiags) {
				t.Fatalf("diagnostics = %+v", p.Diagnostics)
			}
			for i, d := range p.Diagnostics {
				got := string(d.Severity) + " " + d.File + ":" + strconv.Itoa(d.Line) + " " + d.Object.Name + ": " + d.Message
				if !strings.HasPrefix(got, tt.wantDiags[i]) {
					t.Errorf("diag %d = %q, want prefix %q", i, got, tt.wantDiags[i])
				}
				if d.Severity == inventory.Warning && d.Fix == "" && !strings.Contains(d.Message, "applied") {
					t.Errorf("warning without a fix: %+v", d)
				}
			}
		})
	}
}

func TestBuildContainerClaims(t *testing.T) {
	t.Parallel()
	fs := []inventory.Finding{
		finding("a.yaml", 0, "Job", "train", "", "spec.template.spec", "init", inventory.InitContainer, "nvidia.com/gpu", "1"),
		finding("a.yaml", 0, "Job", "train", "", "spec.template.spec", "main", inventory.Container, "aws.amazon.com/neuron", "4"),
		finding("a.yaml", 0, "Job", "train", "", "spec.template.spec", "main", inventory.Container, "vpc.amazonaws.com/efa", "4"),
		finding("a.yaml", 0, "Job", "train", "", "spec.template.spec", "main", inventory.Container, "nvidia.com/gpu", "1"),
	}
	p, err := plan.Build(fs, plantest.Resolver{}, opts(plan.Claims))
	if err != nil {
		t.Fatal(err)
	}
	pe := p.Files[0].Docs[0].Pods[0]
	want := []plan.ContainerEdit{
		{Type: inventory.InitContainer, Name: "init", Remove: []string{"nvidia.com/gpu"}, Claims: []plan.ContainerClaim{{Name: "gpu"}}},
		{Type: inventory.Container, Name: "main", Remove: []string{"aws.amazon.com/neuron", "vpc.amazonaws.com/efa", "nvidia.com/gpu"},
			// One entry per claim: the container uses both requests of neuron-efa.
			Claims: []plan.ContainerClaim{{Name: "neuron-efa"}, {Name: "gpu-2"}}},
	}
	if diff := cmp.Diff(want, pe.Containers); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	wantClaims := []plan.PodClaim{{Name: "gpu", ResourceClaimTemplateName: "train-gpu"}, {Name: "neuron-efa", ResourceClaimTemplateName: "train-neuron-efa"},
		{Name: "gpu-2", ResourceClaimTemplateName: "train-gpu-2"}}
	if diff := cmp.Diff(wantClaims, pe.ResourceClaims); diff != "" {
		t.Errorf("pod claims (-want +got):\n%s", diff)
	}
}

// TestBuildPatch: a kustomize strategic-merge patch's new objects go into
// the claims file beside the kustomization that lists it (not beside the
// patch, which may live elsewhere), that kustomization gains it, and the
// name carries the kustomization's folder under the input root, wherever
// the repository is checked out.
func TestBuildPatch(t *testing.T) {
	t.Parallel()
	for _, checkout := range []string{"/src/repo", "/elsewhere/clone"} {
		patch := checkout + "/patches/gpu.yaml"
		k := checkout + "/overlays/prod/kustomization.yaml"
		o := opts(plan.Claims)
		o.Patch = func(p string) string {
			if p == patch {
				return k
			}
			return ""
		}
		o.Place = func(p string) string { return strings.TrimPrefix(p, checkout+"/") }
		fs := []inventory.Finding{
			finding(patch, 0, "Job", "train", "", "spec.template.spec", "main", inventory.Container, "nvidia.com/gpu", "2"),
			finding(checkout+"/base/train.yaml", 0, "Job", "train", "", "spec.template.spec", "main", inventory.Container, "nvidia.com/gpu", "1"),
		}
		p, err := plan.Build(fs, plantest.Resolver{}, o)
		if err != nil {
			t.Fatal(err)
		}
		fp := p.Files[0]
		if fp.ClaimsFile != checkout+"/overlays/prod/kubedra-claims.yaml" || fp.Kustomization != k {
			t.Errorf("%s: claims file %q listed by %q", checkout, fp.ClaimsFile, fp.Kustomization)
		}
		if got := objectNames(p); !slices.Equal(got, []string{"ResourceClaimTemplate/train-prod-gpu", "ResourceClaimTemplate/train-gpu"}) {
			t.Errorf("%s: names %v, want the patch's qualified by its overlay", checkout, got)
		}
		if base := p.Files[1]; base.ClaimsFile != "" {
			t.Errorf("a resource's objects moved to %q", base.ClaimsFile)
		}
	}
}
