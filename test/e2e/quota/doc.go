// Package quota holds the end-to-end tests of objects that count or limit
// devices (issue 15): a ResourceQuota on requests.nvidia.com/gpu and a
// LimitRange with GPU defaults, before and after `kubedra migrate` (the
// binary at $KUBEDRA_BIN), on a real control plane that runs the
// resourcequota and resourceclaim controllers.
//
// TestQuotaDevicePlugin: the original quota of 8 GPUs admits 8 device-plugin
// pods and rejects the ninth (at pod creation).
//
// TestQuotaMigrated: the quota as migrate writes it for a target without
// DRAExtendedResource (1.35: it adds
// gpu.nvidia.com.deviceclass.resource.k8s.io/devices: 8) lets 8 migrated
// pods' claims be created and rejects the ninth claim (quota is enforced
// when the resourceclaim controller creates the claim from the template);
// the original quota alone, checked first, lets all nine through (so the
// test can fail).
//
// TestQuotaKept: for target 1.37 migrate keeps requests.nvidia.com/gpu (the
// class gpu.nvidia.com declares extendedResourceName nvidia.com/gpu and the
// gate is on): the claims are counted in status.used under that key, and
// the ninth is rejected.
//
// TestLimitRange: the LimitRanger admission plugin injects a LimitRange's
// default nvidia.com/gpu into a migrated container, and a Container max too
// (the API server defaults default to max); a Pod max rejects the migrated
// pod. The LimitRanges as migrate writes them do none of that.
//
// TestDryRun: every object of the governance goldens
// (rewrite/testdata/governance-*/expected.yaml) passes a server-side dry run
// with Kueue's CRDs (testdata/crds/kueue, v0.19.2, see its NOTICE) and
// Volcano's installed.
package quota
