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

package kube

import (
	"bytes"
	"encoding/json"
	"sort"

	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/yaml"
)

// ArgChanges are changes of extra arguments, by section of the
// ClusterConfiguration, then argument name: a value to set, or nil to
// remove the argument.
type ArgChanges map[string]map[string]*string

// SetExtraArgs returns the ClusterConfiguration document doc (YAML, as
// the kubeadm-config ConfigMap holds it) with changes made to its
// sections' extraArgs, and every other field as it was. A section's
// extraArgs keep their shape: a list of {name, value} stays a list (an
// argument set in place of its first occurrence, its other occurrences
// dropped), a map stays a map; a section without extraArgs gets a list,
// or a map in a kubeadm.k8s.io/v1beta3 document. Removing an argument that
// is not there changes nothing, so that applying the same changes twice
// gives the same document.
func SetExtraArgs(doc []byte, changes ArgChanges) ([]byte, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, errors.Wrap(err, "failed to parse kubeadm ClusterConfiguration")
	}
	var cfg map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(js))
	// numbers stay as written, not float64
	dec.UseNumber()
	if err := dec.Decode(&cfg); err != nil || cfg == nil {
		return nil, errors.Errorf("kubeadm ClusterConfiguration is not a document of fields: %s", doc)
	}
	mapStyle := cfg["apiVersion"] == "kubeadm.k8s.io/v1beta3"
	for _, section := range sortedKeys(changes) {
		if err := setSectionArgs(cfg, section, changes[section], mapStyle); err != nil {
			return nil, err
		}
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		return nil, errors.Wrap(err, "failed to write kubeadm ClusterConfiguration")
	}
	b, err := yaml.JSONToYAML(out)
	if err != nil {
		return nil, errors.Wrap(err, "failed to write kubeadm ClusterConfiguration")
	}
	return b, nil
}

// setSectionArgs makes changes to the extraArgs of cfg's section.
func setSectionArgs(cfg map[string]interface{}, section string, changes map[string]*string, mapStyle bool) error {
	sec, _ := cfg[section].(map[string]interface{})
	if cfg[section] != nil && sec == nil {
		return errors.Errorf("kubeadm ClusterConfiguration's %s is not a section of fields", section)
	}
	if sec == nil {
		sec = map[string]interface{}{}
	}
	var args interface{}
	switch current := sec["extraArgs"].(type) {
	case nil:
		if mapStyle {
			args = setMapArgs(map[string]interface{}{}, changes)
		} else {
			args = setListArgs(nil, changes)
		}
	case []interface{}:
		list, err := listArgs(current, section)
		if err != nil {
			return err
		}
		args = setListArgs(list, changes)
	case map[string]interface{}:
		args = setMapArgs(current, changes)
	default:
		return errors.Errorf("kubeadm ClusterConfiguration's %s.extraArgs is neither a list nor a map", section)
	}
	switch a := args.(type) {
	case []interface{}:
		if len(a) == 0 {
			delete(sec, "extraArgs")
		} else {
			sec["extraArgs"] = a
		}
	case map[string]interface{}:
		if len(a) == 0 {
			delete(sec, "extraArgs")
		} else {
			sec["extraArgs"] = a
		}
	}
	if _, had := cfg[section]; had || len(sec) > 0 {
		cfg[section] = sec
	}
	return nil
}

// listArgs checks that every entry of a list of extraArgs is a {name,
// value} whose name is a string.
func listArgs(list []interface{}, section string) ([]interface{}, error) {
	for _, entry := range list {
		m, ok := entry.(map[string]interface{})
		if !ok {
			return nil, errors.Errorf("kubeadm ClusterConfiguration's %s.extraArgs holds %v, not a {name, value}", section, entry)
		}
		if _, ok := m["name"].(string); !ok {
			return nil, errors.Errorf("kubeadm ClusterConfiguration's %s.extraArgs holds %v, without a name", section, entry)
		}
	}
	return list, nil
}

// setListArgs makes changes to a list of {name, value}.
func setListArgs(list []interface{}, changes map[string]*string) []interface{} {
	out := []interface{}{}
	set := map[string]bool{}
	for _, entry := range list {
		m := entry.(map[string]interface{})
		name := m["name"].(string)
		value, changed := changes[name]
		switch {
		case !changed:
			out = append(out, entry)
		case value == nil || set[name]:
			// removed, or a later occurrence of one set already
		default:
			out = append(out, map[string]interface{}{"name": name, "value": *value})
			set[name] = true
		}
	}
	for _, name := range sortedKeys(changes) {
		if value := changes[name]; value != nil && !set[name] {
			out = append(out, map[string]interface{}{"name": name, "value": *value})
		}
	}
	return out
}

// setMapArgs makes changes to a map of names to values.
func setMapArgs(m map[string]interface{}, changes map[string]*string) map[string]interface{} {
	for name, value := range changes {
		if value == nil {
			delete(m, name)
		} else {
			m[name] = *value
		}
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
