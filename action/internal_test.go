package action_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// bugResolver panics on pods named "boom", as a bug in the rules would.
type bugResolver struct{ rules.Set }

func (b *bugResolver) Resolve(pod rules.Pod, opts rules.Options) (rules.Resolution, error) {
	for _, r := range pod.Requests {
		if r.Container == "boom" {
			panic("index out of range [1] with length 1")
		}
	}
	return rules.Default().Resolve(pod, opts)
}

// TestMigrateInternalErrorStopsOneFile: a bug met on one file is an error
// naming that file (rule internal/error, so the command exits 1, not the
// gate's 2); the file is left as it was and the other files are migrated.
func TestMigrateInternalErrorStopsOneFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := strings.Replace(fmt.Sprintf(gpuPod, "bad"), "- name: c", "- name: boom", 1)
	good := fmt.Sprintf(gpuPod, "good")
	for name, data := range map[string]string{"a-bad.yaml": bad, "b-good.yaml": good} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := action.Migrate(context.Background(), action.Input{Paths: []string{"."}, Dir: dir},
		action.MigrateOptions{Resolver: &bugResolver{}, Output: emit.Write, Plan: plan.Options{Target: rules.DefaultTarget}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 || res.Changed != 1 {
		t.Errorf("failed %d, changed %d; want 1 and 1", res.Failed, res.Changed)
	}
	var found bool
	for _, d := range res.Diagnostics {
		if d.Rule == plan.RuleInternal && d.Severity == inventory.Error && d.File == "a-bad.yaml" && strings.Contains(d.Message, "index out of range") {
			found = true
		}
	}
	if !found {
		t.Errorf("no internal error naming a-bad.yaml in %v", res.Diagnostics)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a-bad.yaml")); string(got) != bad {
		t.Errorf("the file with the bug was changed:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "b-good.yaml")); !strings.Contains(string(got), "resourceClaimTemplateName") {
		t.Errorf("the other file was not migrated:\n%s", got)
	}
}

// TestItemsInternalError: scan and check never gate on a decision a bug
// kept from being made: the pod template's items become one error.
func TestItemsInternalError(t *testing.T) {
	t.Parallel()
	f := func(container string) inventory.Finding {
		return inventory.Finding{Origin: inventory.Origin{Path: container + ".yaml"}, Line: 3, Kind: "Pod", Name: container,
			PodTemplatePath: "spec", Container: container, ContainerType: inventory.Container, Resource: "nvidia.com/gpu", Limit: "1"}
	}
	items, bugs := plan.Items([]inventory.Finding{f("boom"), f("fine")}, &bugResolver{}, plan.ItemOptions{})
	if len(items) != 1 || items[0].Container != "fine" || items[0].Status != rules.Mappable {
		t.Errorf("items %+v; want only the one that resolved", items)
	}
	if len(bugs) != 1 || bugs[0].File != "boom.yaml" || bugs[0].Line != 3 || bugs[0].Rule != plan.RuleInternal {
		t.Errorf("bugs %+v; want one internal error at boom.yaml:3", bugs)
	}
}
