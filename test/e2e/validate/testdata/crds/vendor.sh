#!/bin/sh
# vendor.sh copies the CustomResourceDefinitions the validation suite
# installs from git clones of their projects, gzipped and verbatim, with
# each project's LICENSE and a NOTICE naming repository, commit and path.
#
#   MIRROR=/path/to/clones ./vendor.sh
#
# MIRROR holds one bare or normal clone per project, named owner+repo/repo
# (the layout `fetch github:owner/repo` leaves). Re-run it to update; the
# NOTICE records what was copied.
set -eu
cd "$(dirname "$0")"
: "${MIRROR:?set MIRROR to the folder holding owner+repo/repo clones}"

# project  owner/repo  revision  path...
copy() {
	project=$1 repo=$2 rev=$3
	shift 3
	git_dir="$MIRROR/$(echo "$repo" | tr / +)/repo"
	commit=$(git -C "$git_dir" rev-parse "$rev^{commit}")
	date=$(git -C "$git_dir" log -1 --format=%cs "$commit")
	rm -rf "$project"
	mkdir -p "$project"
	git -C "$git_dir" show "$commit:LICENSE" >"$project/LICENSE"
	{
		echo "CustomResourceDefinitions copied verbatim (gzipped) from"
		echo "https://github.com/$repo at $rev (commit $commit, $date):"
		for p in "$@"; do
			echo "  $p"
		done
		echo "Licence: $project/LICENSE (the project's LICENSE at that commit)."
	} >"$project/NOTICE"
	for p in "$@"; do
		git -C "$git_dir" show "$commit:$p" | gzip -9n >"$project/$(basename "$p").gz"
	done
}

copy kuberay ray-project/kuberay HEAD \
	ray-operator/config/crd/bases/ray.io_rayclusters.yaml \
	ray-operator/config/crd/bases/ray.io_rayjobs.yaml \
	ray-operator/config/crd/bases/ray.io_rayservices.yaml
# Kubeflow Trainer v2 (trainer.kubeflow.org).
copy kubeflow-trainer kubeflow/trainer HEAD \
	manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml \
	manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml \
	manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml
# Kubeflow training operator v1 (kubeflow.org/v1): the last release of the
# repository before it became Trainer. Its MPIJob v1 CRD is left out: the
# MPI operator's v2beta1 CRD has the same name (mpijobs.kubeflow.org).
copy kubeflow-training-operator kubeflow/trainer v1.9.4 \
	manifests/base/crds/kubeflow.org_pytorchjobs.yaml \
	manifests/base/crds/kubeflow.org_tfjobs.yaml \
	manifests/base/crds/kubeflow.org_xgboostjobs.yaml \
	manifests/base/crds/kubeflow.org_paddlejobs.yaml \
	manifests/base/crds/kubeflow.org_jaxjobs.yaml
# MXJob left the training operator in v1.8; v1.7.0 is its last CRD.
copy kubeflow-training-operator-mxjob kubeflow/trainer v1.7.0 \
	manifests/base/crds/kubeflow.org_mxjobs.yaml
copy mpi-operator kubeflow/mpi-operator HEAD \
	manifests/base/kubeflow.org_mpijobs.yaml
copy jobset kubernetes-sigs/jobset HEAD \
	config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml
copy lws kubernetes-sigs/lws HEAD \
	config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml
copy kserve kserve/kserve HEAD \
	config/crd/full/serving.kserve.io_inferenceservices.yaml \
	config/crd/full/serving.kserve.io_servingruntimes.yaml \
	config/crd/full/serving.kserve.io_clusterservingruntimes.yaml \
	config/crd/full/serving.kserve.io_inferencegraphs.yaml
copy argo-workflows argoproj/argo-workflows HEAD \
	manifests/base/crds/full/argoproj.io_workflows.yaml \
	manifests/base/crds/full/argoproj.io_workflowtemplates.yaml \
	manifests/base/crds/full/argoproj.io_clusterworkflowtemplates.yaml \
	manifests/base/crds/full/argoproj.io_cronworkflows.yaml
copy volcano volcano-sh/volcano HEAD \
	config/crd/volcano/bases/batch.volcano.sh_jobs.yaml \
	config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml \
	config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml
copy knative-serving knative/serving HEAD \
	config/core/300-resources/service.yaml \
	config/core/300-resources/configuration.yaml \
	config/core/300-resources/revision.yaml
copy spark-operator kubeflow/spark-operator HEAD \
	config/crd/bases/sparkoperator.k8s.io_sparkapplications.yaml \
	config/crd/bases/sparkoperator.k8s.io_scheduledsparkapplications.yaml
# NVIDIA's DRA driver: migrate proposes ComputeDomains (resource.nvidia.com).
copy nvidia-dra-driver-gpu NVIDIA/k8s-dra-driver-gpu HEAD \
	deployments/helm/dra-driver-nvidia-gpu/crds/resource.nvidia.com_computedomains.yaml
