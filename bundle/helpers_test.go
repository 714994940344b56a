package bundle

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

type metav1OwnerRef = metav1.OwnerReference

func ptr[T any](v T) *T { return &v }
