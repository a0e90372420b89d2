module github.com/kindupgrade/kind-upgrade/hack/e2e

go 1.26.8

require (
	github.com/moby/buildkit v0.34.2
	golang.org/x/mod v0.43.0
	mvdan.cc/sh/v3 v3.14.1
	sigs.k8s.io/yaml v1.4.0
)

require (
	github.com/BurntSushi/toml v1.4.0
	github.com/agext/levenshtein v1.2.3 // indirect
	github.com/containerd/typeurl/v2 v2.3.0 // indirect
	github.com/docker/go-units v0.5.0 // indirect
	github.com/kindupgrade/kind-upgrade v0.0.0
	github.com/moby/docker-image-spec v1.3.1 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/planetscale/vtprotobuf v0.6.1-0.20240319094008-0393e58bdf10 // indirect
	github.com/tonistiigi/go-csvvalue v0.0.0-20240814133006-030d3b2625d0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/kindupgrade/kind-upgrade => ../..
