package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
)

func TestIgnores(t *testing.T) {
	t.Parallel()
	ig := &plan.Ignores{Dir: "/repo", WorkDir: "/repo", Source: ".kubedra.yaml", Rules: []plan.IgnoreRule{
		{Path: "charts/**/templates/*.yaml", Reason: "rendered by helm"},
		{Kind: "cronjob", Name: "nightly-*", Reason: "batch keeps the plugin"},
		{Resource: "xilinx.com/*", Namespace: "fpga", Reason: "no DRA driver"},
	}}
	item := func(file, kind, ns, name, res string) inventory.Finding {
		return inventory.Finding{Origin: inventory.Origin{Path: file}, Kind: kind, Namespace: ns, Name: name, Resource: res}
	}
	items := []inventory.Finding{
		item("charts/gpu/templates/job.yaml", "Job", "", "a", "nvidia.com/gpu"),
		item("charts/templates/job.yaml", "Job", "", "a", "nvidia.com/gpu"), // ** matches zero folders
		item("sub/charts/x/templates/job.yaml", "Job", "", "a", "nvidia.com/gpu"),
		item("deploy/cron.yaml", "CronJob", "", "nightly-train", "nvidia.com/gpu"),
		item("deploy/cron.yaml", "CronJob", "", "nightly-b", "nvidia.com/gpu"), // annotation wins
		item("deploy/fpga.yaml", "Job", "fpga", "s", "xilinx.com/u250"),
		item("deploy/fpga.yaml", "Job", "other", "s", "xilinx.com/u250"),
		item("-", "Job", "", "a", "nvidia.com/gpu"),
	}
	items[4].Ignore = "annotation reason"
	var got []string
	for _, it := range items {
		got = append(got, ig.Reason(it))
	}
	want := []string{"rendered by helm (.kubedra.yaml)", "rendered by helm (.kubedra.yaml)", "", "batch keeps the plugin (.kubedra.yaml)",
		"annotation reason", "no DRA driver (.kubedra.yaml)", "", ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
