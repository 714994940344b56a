package rewrite_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/golden"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rewrite/plan/plantest"
	"github.com/kubedra/kubedra/rules"
)

// result is one run of migrate over one file.
type result struct {
	out    []byte
	claims []byte // the claims file, when the plan uses one
	plan   *plan.Plan
	res    *action.MigrateResult
	failed bool
}

// migrateOptions are the options of `kubedra migrate` with the test rules.
func migrateOptions(o plan.Options) action.MigrateOptions {
	if o.Target == (rules.Version{}) {
		o.Target = rules.DefaultTarget
	}
	return action.MigrateOptions{Resolver: plantest.Resolver{}, Encoder: plantest.Encoder{}, Plan: o}
}

// builtinOptions are the options of `kubedra migrate` with its own rules.
func builtinOptions(o plan.Options) action.MigrateOptions {
	mo := migrateOptions(o)
	mo.Resolver, mo.Encoder = nil, nil
	return mo
}

// run migrates data as the file name in a folder of its own, as
// `kubedra migrate -w name` does there (action.Migrate), after planning it
// as `migrate --plan` does.
func run(t testing.TB, name string, data []byte, o plan.Options) result {
	t.Helper()
	return runWith(t, name, data, o, migrateOptions)
}

// runWith is run with the rules of opts (migrateOptions or builtinOptions).
func runWith(t testing.TB, name string, data []byte, o plan.Options, migrateOptions func(plan.Options) action.MigrateOptions) result {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	in := action.Input{Paths: []string{name}, Dir: dir}
	mo := migrateOptions(o)
	mo.PlanOnly = true
	pr, err := action.Migrate(context.Background(), in, mo)
	if err != nil {
		t.Fatal(err)
	}
	mo = migrateOptions(o)
	mo.Output = emit.Write
	res, err := action.Migrate(context.Background(), in, mo)
	if err != nil {
		t.Fatal(err)
	}
	r := result{plan: pr.Plan, res: res, failed: res.Failed > 0}
	if r.out, err = os.ReadFile(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	if o.ClaimsFile != "" || strings.HasSuffix(name, ".json") {
		claims := o.ClaimsFile
		if claims == "" {
			claims = strings.TrimSuffix(name, ".json") + "-claims.yaml"
		}
		r.claims, _ = os.ReadFile(filepath.Join(dir, claims))
	}
	return r
}

// runStdin migrates data as `kubedra migrate -` does: no files, so the
// fuzzer stays fast.
func runStdin(t testing.TB, data []byte, o plan.Options) result {
	t.Helper()
	var out bytes.Buffer
	mo := migrateOptions(o)
	mo.Output, mo.Out = emit.Stream, &out
	res, err := action.Migrate(context.Background(), action.Input{Paths: []string{"-"}, Stdin: bytes.NewReader(data)}, mo)
	if err != nil {
		t.Fatal(err)
	}
	return result{out: out.Bytes(), res: res, failed: res.Failed > 0}
}

// options reads a case's flags file: one flag per line; rules=builtin
// runs the case with kubedra's own rules instead of plantest's.
func options(t *testing.T, dir string) (plan.Options, func(plan.Options) action.MigrateOptions) {
	o := plan.Options{Strategy: plan.Claims}
	with := migrateOptions
	b, err := os.ReadFile(filepath.Join(dir, "flags"))
	if err != nil {
		return o, with
	}
	for _, l := range strings.Fields(string(b)) {
		k, v, _ := strings.Cut(l, "=")
		switch k {
		case "allow-lossy":
			o.AllowLossy = true
		case "keep-node-selectors":
			o.KeepNodeSelectors = true
		case "kueue-maps-classes":
			o.KueueMapsClasses = true
		case "share":
			o.Share = true
		case "consumable-shares":
			o.ConsumableShares = true
		case "strategy":
			o.Strategy = plan.Strategy(v)
		case "target":
			tv, err := rules.ParseVersion(v)
			if err != nil {
				t.Fatal(err)
			}
			o.Target = tv
		case "claims-file":
			o.ClaimsFile = v
		case "rules":
			if v != "builtin" {
				t.Fatalf("rules=%s: only rules=builtin is known", v)
			}
			with = builtinOptions
		default:
			t.Fatalf("unknown flag %q", l)
		}
	}
	return o, with
}

// diagnostics are what migrate reported, one per line.
func diagnostics(r *action.MigrateResult) []byte {
	var b bytes.Buffer
	for _, d := range r.Diagnostics {
		if o := d.Object; o != nil {
			fmt.Fprintf(&b, "%s %s:%d %s/%s %s %s: %s", d.Severity, d.File, d.Line, o.Kind, o.Name, d.Container, d.Resource, d.Message)
		} else {
			fmt.Fprintf(&b, "%s %s: %s", d.Severity, d.Location(), d.Message)
		}
		if d.Fix != "" {
			fmt.Fprintf(&b, " (fix: %s)", d.Fix)
		}
		b.WriteByte('\n')
	}
	for _, w := range r.Workloads {
		fmt.Fprintf(&b, "strategy %s:%d %s: %s: %s\n", w.File, w.Line, w.Object, w.Strategy, w.Why)
	}
	return b.Bytes()
}

// TestGolden runs every testdata/<case>: input.yaml (or input.json) is
// migrated with the case's flags (rules=builtin: kubedra's own rules, else
// plantest's); expected.yaml holds the result,
// claims.yaml the claims file (if any), diagnostics.txt what was reported.
// The expected output must migrate to itself (idempotence) and every object
// in it must decode strictly into its Kubernetes type.
func TestGolden(t *testing.T) {
	t.Parallel()
	cases, err := filepath.Glob("testdata/*/input.*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, in := range cases {
		dir := filepath.Dir(in)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			o, with := options(t, dir)
			name := "input" + filepath.Ext(in)
			r := runWith(t, name, data, o, with)
			golden.Check(t, filepath.Join(dir, "expected"+filepath.Ext(in)), r.out)
			golden.Check(t, filepath.Join(dir, "diagnostics.txt"), diagnostics(r.res))
			if r.claims != nil || fileExists(filepath.Join(dir, "claims.yaml")) {
				golden.Check(t, filepath.Join(dir, "claims.yaml"), r.claims)
			}
			// No comment line of the input is lost (issue 28: commented-out
			// entries above a removed GPU label); the comment beside a
			// removed entry may go with it.
			for c, n := range commentLines(data) {
				if got := strings.Count(string(r.out), c); got < n {
					t.Errorf("comment line %q lost (%d of %d)", c, n-got, n)
				}
			}
			if r.failed {
				if !bytes.Equal(r.out, data) {
					t.Errorf("a file that fails must be left as it was")
				}
				return
			}
			// Idempotence: the output migrates to itself.
			again := runWith(t, name, r.out, o, with)
			if again.failed || !bytes.Equal(again.out, r.out) {
				t.Errorf("second run changed the output (%s):\n%s", diagnostics(again.res), again.out)
			}
			strictDecode(t, r.out, r.plan)
			if r.claims != nil {
				strictDecode(t, r.claims, nil)
			}
		})
	}
}

// commentLines counts the lines of text that are comments only.
func commentLines(text []byte) map[string]int {
	out := map[string]int{}
	for _, l := range strings.Split(string(text), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "#") {
			out[t]++
		}
	}
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// strictDecode decodes every document of out into its k8s.io/api type with
// unknown fields rejected, and every edited pod spec into corev1.PodSpec.
func strictDecode(t *testing.T, out []byte, p *plan.Plan) {
	t.Helper()
	nodes, err := (&kioReader{data: out}).read()
	if err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	// Objects kubedra made or edited must decode; others are the user's.
	touched := map[string]bool{"ResourceClaimTemplate": true, "ResourceClaim": true, "DeviceClass": true}
	if p != nil {
		for _, fp := range p.Files {
			for _, dp := range fp.Docs {
				touched[dp.Kind+"/"+dp.Name] = true
			}
			for _, u := range fp.Upgrades {
				touched[u.Kind+"/"+u.Name] = true
			}
		}
	}
	check := func(n *yaml.RNode) {
		if touched[n.GetKind()] || touched[n.GetKind()+"/"+n.GetName()] {
			checkObject(t, n)
		}
	}
	for _, n := range nodes {
		check(n)
		if n.GetKind() == "List" {
			items, _ := n.Pipe(yaml.Lookup("items"))
			els, _ := items.Elements()
			for _, it := range els {
				check(it)
			}
		}
	}
	if p == nil {
		return
	}
	for _, fp := range p.Files {
		for _, dp := range fp.Docs {
			for _, n := range nodes {
				cands := []*yaml.RNode{n}
				if n.GetKind() == "List" {
					items, _ := n.Pipe(yaml.Lookup("items"))
					cands, _ = items.Elements()
				}
				for _, c := range cands {
					if c.GetKind() != dp.Kind || c.GetName() != dp.Name {
						continue
					}
					for _, pe := range dp.Pods {
						spec, err := c.Pipe(yaml.Lookup(lookupPath(pe.Path)...))
						if err != nil || spec == nil {
							t.Errorf("%s/%s: pod spec %s not found", dp.Kind, dp.Name, pe.Path)
							continue
						}
						var ps corev1.PodSpec
						decode(t, spec, &ps, dp.Kind+"/"+dp.Name+" "+pe.Path)
					}
				}
			}
		}
	}
}

// lookupPath turns a.b[name=x].c into kyaml Lookup parts.
func lookupPath(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		if i := strings.IndexByte(part, '['); i > 0 {
			idx := part[i:]
			if !strings.Contains(idx, "=") {
				idx = strings.Trim(idx, "[]")
			}
			out = append(out, part[:i], idx)
			continue
		}
		out = append(out, part)
	}
	return out
}

func checkObject(t *testing.T, n *yaml.RNode) {
	t.Helper()
	if err := objectErr(n); err != nil {
		t.Errorf("%s/%s does not decode strictly: %v", n.GetKind(), n.GetName(), err)
	}
}

// objectErr decodes a built-in or DRA object strictly into its k8s.io/api
// type; other kinds are not checked.
func objectErr(n *yaml.RNode) error {
	var obj any
	switch n.GetApiVersion() + " " + n.GetKind() {
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "apps/v1 StatefulSet":
		obj = &appsv1.StatefulSet{}
	case "apps/v1 DaemonSet":
		obj = &appsv1.DaemonSet{}
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "batch/v1 CronJob":
		obj = &batchv1.CronJob{}
	case "v1 Pod":
		obj = &corev1.Pod{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "resource.k8s.io/v1 ResourceClaimTemplate":
		obj = &resourcev1.ResourceClaimTemplate{}
	case "resource.k8s.io/v1 ResourceClaim":
		obj = &resourcev1.ResourceClaim{}
	case "resource.k8s.io/v1 DeviceClass":
		obj = &resourcev1.DeviceClass{}
	case "resource.k8s.io/v1 ResourceSlice":
		obj = &resourcev1.ResourceSlice{}
	default:
		return nil
	}
	s, err := n.String()
	if err != nil {
		return err
	}
	return sigsyaml.UnmarshalStrict([]byte(s), obj)
}

func decode(t *testing.T, n *yaml.RNode, into any, what string) {
	t.Helper()
	s, err := n.String()
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.UnmarshalStrict([]byte(s), into); err != nil {
		t.Errorf("%s does not decode strictly: %v", what, err)
	}
}

type kioReader struct{ data []byte }

func (r *kioReader) read() ([]*yaml.RNode, error) {
	dec := yaml.NewDecoder(bytes.NewReader(r.data))
	var out []*yaml.RNode
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return nil, err
		}
		out = append(out, yaml.NewRNode(&n))
	}
}
