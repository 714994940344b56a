package rules

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubedra/kubedra/inventory"
)

// TestResolveCountsLikeTheScheduler resolves random pods (init containers,
// sidecars and app containers asking for GPUs and EFA interfaces) and
// checks the claims against the scheduler's own effective-request formula
// (k8s.io/component-helpers/resource.PodRequests, which kube-scheduler's
// fit plugin uses for extended resources): the pod asks for exactly as many
// devices of each class as the device plugin would have handed out, every
// container sees at least its own devices and long-lived ones exactly
// theirs, containers running at the same time never share a device, a
// container uses one request of a claim or all of them (it names a claim
// once), and no claim holds more than the API allows.
func TestResolveCountsLikeTheScheduler(t *testing.T) {
	t.Parallel()
	s := Default()
	rng := rand.New(rand.NewPCG(1, 13))
	classOf := map[string]string{"nvidia.com/gpu": "gpu.nvidia.com", "vpc.amazonaws.com/efa": "efa.networking.k8s.aws"}
	for n := 0; n < 3000; n++ {
		var pod corev1.Pod
		var reqs []PodRequest
		add := func(ctype inventory.ContainerType, idx int, name string) {
			// Requests as the API server defaults them: equal to the limits.
			c := corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}}}
			for _, r := range []string{"nvidia.com/gpu", "vpc.amazonaws.com/efa"} {
				max := 9
				if r == "vpc.amazonaws.com/efa" {
					max = 41
				}
				if rng.IntN(3) == 0 {
					continue
				}
				q := 1 + rng.IntN(max)
				c.Resources.Limits[corev1.ResourceName(r)] = *resource.NewQuantity(int64(q), resource.DecimalSI)
				c.Resources.Requests[corev1.ResourceName(r)] = *resource.NewQuantity(int64(q), resource.DecimalSI)
				reqs = append(reqs, PodRequest{Container: name, ContainerIndex: idx, ContainerType: ctype, Resource: r, Quantity: fmt.Sprint(q)})
			}
			switch ctype {
			case inventory.Container:
				pod.Spec.Containers = append(pod.Spec.Containers, c)
			case inventory.SidecarContainer:
				always := corev1.ContainerRestartPolicyAlways
				c.RestartPolicy = &always
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
			default:
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
			}
		}
		for i := range rng.IntN(4) {
			ctype := inventory.InitContainer
			if rng.IntN(3) == 0 {
				ctype = inventory.SidecarContainer
			}
			add(ctype, i, fmt.Sprintf("init%d", i))
		}
		for i := range 1 + rng.IntN(3) {
			add(inventory.Container, i, fmt.Sprintf("app%d", i))
		}
		if len(reqs) == 0 {
			continue
		}
		res, err := s.Resolve(Pod{Requests: reqs}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		desc := fmt.Sprintf("pod %d: %+v\n%v", n, reqs, shape(res))
		want := resourcehelper.PodRequests(&pod, resourcehelper.PodResourcesOptions{})
		got := map[string]int64{}
		size := map[string]int64{} // claim/request -> devices
		for ci, c := range res.Claims {
			var devices int64
			for _, q := range c.Spec.Devices.Requests {
				got[q.Exactly.DeviceClassName] += q.Exactly.Count
				devices += q.Exactly.Count
				size[fmt.Sprint(ci, "/", q.Name)] = q.Exactly.Count
			}
			if devices > maxClaimDevices || len(c.Spec.Devices.Requests) > maxClaimRequests {
				t.Fatalf("%s\nclaim %s holds %d devices in %d requests", desc, c.Name, devices, len(c.Spec.Devices.Requests))
			}
		}
		for r, class := range classOf {
			w := want[corev1.ResourceName(r)]
			if got[class] != w.Value() {
				t.Fatalf("%s\n%s: the claims ask for %d devices, the scheduler counts %d", desc, r, got[class], w.Value())
			}
		}
		// What each container sees, and who holds a device at the same time.
		seen := map[string]int{} // claim/request -> long-lived request index
		for i, d := range res.Decisions {
			if d.Claim < 0 {
				t.Fatalf("%s\nrequest %d not mapped: %+v", desc, i, d)
			}
			var sees int64
			for _, ref := range d.Refs {
				k := fmt.Sprint(ref.Claim, "/", ref.Request)
				sees += size[k]
				if reqs[i].ContainerType == inventory.InitContainer {
					continue
				}
				if j, ok := seen[k]; ok {
					t.Fatalf("%s\nlong-lived requests %d and %d share %s", desc, j, i, k)
				}
				seen[k] = i
			}
			wantSee, _ := parseCount(reqs[i].Quantity)
			if sees < wantSee || reqs[i].ContainerType != inventory.InitContainer && sees != wantSee {
				t.Fatalf("%s\nrequest %d (%s of %s) sees %d devices, asked %d", desc, i, reqs[i].Resource, reqs[i].Container, sees, wantSee)
			}
		}
		// A container names a claim once: it uses one of its requests, or all.
		uses := map[string]map[string]bool{} // container/claim -> requests
		for i, d := range res.Decisions {
			for _, ref := range d.Refs {
				k := string(reqs[i].ContainerType) + "/" + reqs[i].Container + "\x00" + fmt.Sprint(ref.Claim)
				if uses[k] == nil {
					uses[k] = map[string]bool{}
				}
				uses[k][ref.Request] = true
			}
		}
		for k, used := range uses {
			var ci int
			fmt.Sscan(k[strings.IndexByte(k, 0)+1:], &ci)
			if n := len(res.Claims[ci].Spec.Devices.Requests); len(used) > 1 && len(used) < n {
				t.Fatalf("%s\ncontainer %q uses %d of the %d requests of claim %s", desc, k[:strings.IndexByte(k, 0)], len(used), n, res.Claims[ci].Name)
			}
		}
		for i, d := range res.Decisions {
			if reqs[i].ContainerType != inventory.InitContainer {
				continue
			}
			for _, ref := range d.Refs {
				j, ok := seen[fmt.Sprint(ref.Claim, "/", ref.Request)]
				if ok && reqs[j].ContainerType == inventory.SidecarContainer && reqs[j].ContainerIndex < reqs[i].ContainerIndex {
					t.Fatalf("%s\ninit request %d reuses the devices of sidecar request %d, which runs beside it", desc, i, j)
				}
			}
		}
	}
}
