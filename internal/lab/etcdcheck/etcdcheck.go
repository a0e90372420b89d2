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

// Package etcdcheck reads etcd's answers the e2e asks for over HTTP from a
// control-plane node (health, status, member list) and checks them: one
// healthy voting member per control-plane node at the expected version,
// and the ConfigMaps written before the upgrade still there.
package etcdcheck

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

// etcd's image (built by hack/e2e with nothing but the etcd binary in it)
// has no etcdctl and no shell, so the e2e asks each member over HTTP from
// its node, whose image has curl: /health on the metrics listener kubeadm
// configures (http://127.0.0.1:2381), and the v3 API's JSON gateway on the
// client listener (https://127.0.0.1:2379) with the API server's etcd
// client certificate.
const (
	HealthURL  = "http://127.0.0.1:2381/health"
	StatusURL  = "https://127.0.0.1:2379/v3/maintenance/status"
	MembersURL = "https://127.0.0.1:2379/v3/cluster/member/list"
)

// Curl is the command, run on a control-plane node, that POSTs {} to
// one of the gateway's URLs.
func Curl(url string) []string {
	return []string{"curl", "-fsS", "--max-time", "10",
		"--cacert", "/etc/kubernetes/pki/etcd/ca.crt",
		"--cert", "/etc/kubernetes/pki/apiserver-etcd-client.crt",
		"--key", "/etc/kubernetes/pki/apiserver-etcd-client.key",
		"-X", "POST", "-d", "{}", url}
}

// Status is what a member says of itself.
type Status struct {
	MemberID, Leader, Version string
}

// Member is one entry of the member list.
type Member struct {
	ID, Name  string
	IsLearner bool
}

// jsonID reads an etcd ID: the gateway writes 64-bit integers as strings,
// but accept numbers too.
func jsonID(raw json.RawMessage) string {
	return strings.Trim(string(raw), `"`)
}

// field returns the first of names that m has: the gateway's field names
// are the proto names (member_id) or their lowerCamelCase (memberId)
// depending on its marshaler.
func field(m map[string]json.RawMessage, names ...string) json.RawMessage {
	for _, n := range names {
		if v, ok := m[n]; ok {
			return v
		}
	}
	return nil
}

// ParseStatus reads the answer of /v3/maintenance/status.
func ParseStatus(body []byte) (Status, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return Status{}, fmt.Errorf("not etcd's status: %v: %s", err, body)
	}
	var header map[string]json.RawMessage
	if h := field(m, "header"); h != nil {
		if err := json.Unmarshal(h, &header); err != nil {
			return Status{}, fmt.Errorf("not etcd's status header: %v: %s", err, body)
		}
	}
	var version string
	if v := field(m, "version"); v != nil {
		if err := json.Unmarshal(v, &version); err != nil {
			return Status{}, fmt.Errorf("not etcd's version: %v: %s", err, body)
		}
	}
	s := Status{MemberID: jsonID(field(header, "member_id", "memberId")), Leader: jsonID(field(m, "leader")), Version: version}
	if s.MemberID == "" || s.Version == "" {
		return s, fmt.Errorf("etcd's status lacks the member ID or the version: %s", body)
	}
	if errs := field(m, "errors"); errs != nil && string(errs) != "[]" && string(errs) != "null" {
		return s, fmt.Errorf("etcd reports errors: %s", errs)
	}
	return s, nil
}

// ParseMembers reads the answer of /v3/cluster/member/list.
func ParseMembers(body []byte) ([]Member, error) {
	var list struct {
		Members []struct {
			ID        json.RawMessage `json:"ID"`
			Name      string          `json:"name"`
			IsLearner bool            `json:"isLearner"`
		} `json:"members"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("not etcd's member list: %v: %s", err, body)
	}
	var members []Member
	for _, m := range list.Members {
		members = append(members, Member{ID: jsonID(m.ID), Name: m.Name, IsLearner: m.IsLearner})
	}
	return members, nil
}

// ParseHealth reads /health: {"health":"true",...}.
func ParseHealth(body []byte) error {
	var h struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("not etcd's health: %v: %s", err, body)
	}
	if h.Health != "true" {
		return fmt.Errorf("etcd is not healthy: %s", body)
	}
	return nil
}

// VersionOf is the etcd version an image of kubeadm's list runs: its
// tag without the image's revision, registry.k8s.io/etcd:3.6.5-0 runs
// 3.6.5.
func VersionOf(image string) string {
	version := strings.TrimPrefix(image[strings.LastIndex(image, ":")+1:], "v")
	if i := strings.LastIndex(version, "-"); i >= 0 && strings.Trim(version[i+1:], "0123456789") == "" {
		version = version[:i]
	}
	return version
}

// CheckMembers checks that the cluster's etcd is made of exactly the
// control-plane nodes, as voting members (no learner), and that each
// member's status (statuses, by node) names the same leader, one of the
// members, and runs version.
func CheckMembers(members []Member, statuses map[string]Status, controlPlanes []string, version string) error {
	var problems []string
	ids := map[string]string{} // ID -> name
	for _, m := range members {
		ids[m.ID] = m.Name
		if m.IsLearner {
			problems = append(problems, m.Name+" is a learner")
		}
		if !slices.Contains(controlPlanes, m.Name) {
			problems = append(problems, fmt.Sprintf("member %q is not a control-plane node", m.Name))
		}
	}
	if len(members) != len(controlPlanes) {
		problems = append(problems, fmt.Sprintf("%d members, want %d", len(members), len(controlPlanes)))
	}
	leaders := map[string]bool{}
	for _, cp := range controlPlanes {
		s, ok := statuses[cp]
		switch {
		case !ok:
			problems = append(problems, "no status from "+cp)
			continue
		case ids[s.MemberID] != cp:
			problems = append(problems, fmt.Sprintf("the member on %s has ID %s, which the member list gives to %q", cp, s.MemberID, ids[s.MemberID]))
		case s.Version != version:
			problems = append(problems, fmt.Sprintf("the member on %s runs etcd %s, want %s", cp, s.Version, version))
		}
		leaders[s.Leader] = true
		if ids[s.Leader] == "" {
			problems = append(problems, fmt.Sprintf("the member on %s follows leader %s, not a member", cp, s.Leader))
		}
	}
	if len(leaders) > 1 {
		problems = append(problems, fmt.Sprintf("the members disagree on the leader: %v", leaders))
	}
	return timeline.JoinProblems("etcd", problems)
}

// Keys is how many ConfigMaps the tests write before the upgrade and
// reads back (through each API server in the HA test) after it.
const Keys = 20

// KeysManifest is the namespace e2e-etcd and its ConfigMaps key-00,
// key-01, ..., each holding value <token>-<index>.
func KeysManifest(token string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: e2e-etcd\n")
	for i := 0; i < Keys; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: key-%02d\n  namespace: e2e-etcd\ndata:\n  value: %q\n", i, fmt.Sprintf("%s-%02d", token, i))
	}
	return b.String()
}

// CheckKeys checks `kubectl get configmaps --namespace e2e-etcd -o
// json` against KeysManifest(token): every key, with its value, and no
// other (the namespace's kube-root-ca.crt aside).
func CheckKeys(out, token string) error {
	var list struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Data     map[string]string     `json:"data"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return err
	}
	got := map[string]string{}
	for _, it := range list.Items {
		if strings.HasPrefix(it.Metadata.Name, "key-") {
			got[it.Metadata.Name] = it.Data["value"]
		}
	}
	var problems []string
	for i := 0; i < Keys; i++ {
		name, want := fmt.Sprintf("key-%02d", i), fmt.Sprintf("%s-%02d", token, i)
		if v, ok := got[name]; !ok {
			problems = append(problems, name+" is missing")
		} else if v != want {
			problems = append(problems, fmt.Sprintf("%s holds %q, want %q", name, v, want))
		}
		delete(got, name)
	}
	for name := range got {
		problems = append(problems, name+" was not written by the test")
	}
	sort.Strings(problems)
	return timeline.JoinProblems("the ConfigMaps written before the upgrade", problems)
}
