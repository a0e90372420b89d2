module github.com/kindupgrade/kind-upgrade

go 1.26

require (
	al.essio.dev/pkg/shellescape v1.5.1
	github.com/BurntSushi/toml v1.4.0
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/distribution/reference v0.6.0
	github.com/spf13/cobra v1.8.0
	github.com/spf13/pflag v1.0.5
	sigs.k8s.io/kind v0.33.0
	sigs.k8s.io/yaml v1.4.0
)

require (
	github.com/evanphx/json-patch/v5 v5.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/pelletier/go-toml v1.9.5 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/sys v0.6.0 // indirect
)
