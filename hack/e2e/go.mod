module github.com/kindupgrade/kind-upgrade/hack/e2e

go 1.24.0

require sigs.k8s.io/yaml v1.4.0
