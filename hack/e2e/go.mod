module github.com/kindupgrade/kind-upgrade/hack/e2e

go 1.24.0
