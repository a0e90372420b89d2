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
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

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

// Arg is one of a component's extraArgs.
type Arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ArgSections are the ClusterConfiguration's sections with extraArgs the
// fake renders, and the static pods rendered from each.
var ArgSections = map[string]string{"apiServer": "kube-apiserver", "controllerManager": "kube-controller-manager", "scheduler": "kube-scheduler"}

// sectionOf returns the section a static pod is rendered from, "" for
// none (etcd).
func sectionOf(component string) string {
	for section, c := range ArgSections {
		if c == component {
			return section
		}
	}
	return ""
}

// mapStyle reports whether the cluster's ClusterConfiguration keeps
// extraArgs as maps (v1beta3) rather than lists.
func (c *Cluster) mapStyle() bool {
	return c.ConfigAPIVersion == "kubeadm.k8s.io/v1beta3"
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
	b, err := json.Marshal(cfg)
	if err != nil {
		panic(err) // a struct of strings always marshals
	}
	var doc map[string]interface{}
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	// what kind's config writes, as in the captures
	doc["apiServer"] = map[string]interface{}{"certSANs": []string{"localhost", "127.0.0.1"}}
	doc["controllerManager"] = map[string]interface{}{}
	doc["scheduler"] = map[string]interface{}{}
	doc["networking"] = map[string]interface{}{"dnsDomain": "cluster.local", "podSubnet": "10.244.0.0/16", "serviceSubnet": "10.96.0.0/16"}
	for section, args := range c.ExtraArgs {
		if len(args) == 0 {
			continue
		}
		sec := doc[section].(map[string]interface{})
		if c.mapStyle() {
			m := map[string]string{}
			for _, a := range args {
				m[a.Name] = a.Value
			}
			sec["extraArgs"] = m
		} else {
			sec["extraArgs"] = args
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// setClusterConfiguration takes a ClusterConfiguration written back to
// the kubeadm-config ConfigMap. The fake keeps only what it simulates:
// any other change than of the sections' extraArgs (a field dropped or
// changed) is refused, so that a test cannot pass on an edit that loses
// the user's configuration; so are extraArgs of the other shape than the
// document's apiVersion has (kubeadm would refuse them).
func (c *Cluster) setClusterConfiguration(doc string) (string, int) {
	strip := func(text string) (map[string]interface{}, map[string]interface{}, error) {
		var m map[string]interface{}
		if err := yaml.Unmarshal([]byte(text), &m); err != nil {
			return nil, nil, err
		}
		args := map[string]interface{}{}
		for section := range ArgSections {
			if sec, ok := m[section].(map[string]interface{}); ok {
				if a, ok := sec["extraArgs"]; ok {
					args[section] = a
				}
				delete(sec, "extraArgs")
			}
		}
		return m, args, nil
	}
	was, _, err := strip(c.clusterConfiguration())
	if err != nil {
		panic(err)
	}
	now, args, err := strip(doc)
	if err != nil {
		return "error: unable to parse the ClusterConfiguration: " + err.Error(), 1
	}
	if !reflect.DeepEqual(was, now) {
		return fmt.Sprintf("fakenode: the ClusterConfiguration written changed more than extraArgs:\n%s\nwas:\n%s", doc, c.clusterConfiguration()), 127
	}
	extra := map[string][]Arg{}
	for section, a := range args {
		b, _ := json.Marshal(a)
		var list []Arg
		var m map[string]string
		switch {
		case !c.mapStyle() && json.Unmarshal(b, &list) == nil:
			extra[section] = list
		case c.mapStyle() && json.Unmarshal(b, &m) == nil:
			for _, name := range slices.Sorted(maps.Keys(m)) {
				extra[section] = append(extra[section], Arg{Name: name, Value: m[name]})
			}
		default:
			return fmt.Sprintf("fakenode: %s.extraArgs %s is not what kubeadm reads in %s", section, b, or(c.ConfigAPIVersion, "kubeadm.k8s.io/v1beta4")), 127
		}
	}
	c.ExtraArgs = extra
	return "configmap/kubeadm-config patched\n", 0
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
