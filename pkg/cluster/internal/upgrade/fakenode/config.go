/*
Copyright 2026 The kind-upgrade Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package fakenode

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// imageMeta is kubeadm's per-component image override.
type imageMeta struct {
	ImageRepository string `json:"imageRepository,omitempty"`
	ImageTag        string `json:"imageTag,omitempty"`
}

// localEtcd is a ClusterConfiguration's etcd.local.
type localEtcd struct {
	DataDir string `json:"dataDir,omitempty"`
	imageMeta
}

// clusterConfig is the part of kubeadm's ClusterConfiguration about images.
type clusterConfig struct {
	APIVersion        string `json:"apiVersion"`
	Kind              string `json:"kind"`
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	ImageRepository   string `json:"imageRepository,omitempty"`
	Etcd              struct {
		Local *localEtcd `json:"local,omitempty"`
	} `json:"etcd"`
	DNS imageMeta `json:"dns"`
}

// clusterConfiguration is the kubeadm-config ConfigMap's
// ClusterConfiguration, as kubeadm stores it for a kind cluster.
func (c *Cluster) clusterConfiguration() string {
	cfg := clusterConfig{
		APIVersion:        or(c.ConfigAPIVersion, "kubeadm.k8s.io/v1beta4"),
		Kind:              "ClusterConfiguration",
		KubernetesVersion: c.KubernetesVersion,
		ImageRepository:   or(c.ImageConfig.Repository, "registry.k8s.io"),
		DNS:               imageMeta{ImageRepository: c.ImageConfig.DNSRepository, ImageTag: c.ImageConfig.DNSTag},
	}
	cfg.Etcd.Local = &localEtcd{DataDir: "/var/lib/etcd", imageMeta: imageMeta{ImageRepository: c.ImageConfig.EtcdRepository, ImageTag: c.ImageConfig.EtcdTag}}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		panic(err) // a struct of strings always marshals
	}
	return string(b)
}

// parseImagesConfig reads the document `kubeadm config images list
// --config` is given, refusing what the real kubeadm refuses: another kind,
// an apiVersion it does not know, a field it does not have.
func parseImagesConfig(doc string) (ImageConfig, error) {
	var cfg clusterConfig
	if err := yaml.UnmarshalStrict([]byte(doc), &cfg); err != nil {
		return ImageConfig{}, fmt.Errorf("error converting YAML to JSON: %v", err)
	}
	switch cfg.APIVersion {
	case "kubeadm.k8s.io/v1beta3", "kubeadm.k8s.io/v1beta4", "kubeadm.k8s.io/v1":
	default:
		return ImageConfig{}, fmt.Errorf("no kind %q is registered for version %q", cfg.Kind, cfg.APIVersion)
	}
	if cfg.Kind != "ClusterConfiguration" {
		return ImageConfig{}, fmt.Errorf("no InitConfiguration or ClusterConfiguration kind was found in the YAML file")
	}
	out := ImageConfig{Repository: cfg.ImageRepository, DNSRepository: cfg.DNS.ImageRepository, DNSTag: cfg.DNS.ImageTag}
	if l := cfg.Etcd.Local; l != nil {
		out.EtcdRepository, out.EtcdTag = l.ImageRepository, l.ImageTag
	}
	return out, nil
}
