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

package etcdcheck

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

func TestParseEtcd(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		// the gateway with proto names
		`{"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"512","raft_term":"3"},"version":"3.6.5","dbSize":"2097152","leader":"10276657743932975437","raftIndex":"600","raftTerm":"3","raftAppliedIndex":"600","dbSizeInUse":"1000000","storageVersion":"3.6"}`,
		// lowerCamelCase, numbers
		`{"header":{"clusterId":1,"memberId":10276657743932975437},"version":"3.6.5","leader":10276657743932975437,"errors":[]}`,
	} {
		s, err := ParseStatus([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if want := (Status{MemberID: "10276657743932975437", Leader: "10276657743932975437", Version: "3.6.5"}); s != want {
			t.Errorf("got %+v, want %+v", s, want)
		}
	}
	for _, bad := range []string{`404 page not found`, `{"version":"3.6.5"}`, `{"header":{"member_id":"1"},"version":"3.6.5","errors":["NOSPACE"]}`} {
		if _, err := ParseStatus([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}

	members, err := ParseMembers([]byte(`{"header":{"member_id":"1"},"members":[{"ID":"1","name":"ha-control-plane","peerURLs":["https://172.18.0.4:2380"],"clientURLs":["https://172.18.0.4:2379"]},{"ID":"2","name":"ha-control-plane2","isLearner":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 2 || members[0] != (Member{ID: "1", Name: "ha-control-plane"}) || !members[1].IsLearner {
		t.Errorf("got %+v", members)
	}

	if err := ParseHealth([]byte(`{"health":"true","reason":""}`)); err != nil {
		t.Error(err)
	}
	if err := ParseHealth([]byte(`{"health":"false","reason":"RAFT NO LEADER"}`)); err == nil {
		t.Error("an unhealthy member passed")
	}

	for image, want := range map[string]string{
		"registry.k8s.io/etcd:3.6.5-0":      "3.6.5",
		"registry.k8s.io/etcd:v3.6.4":       "3.6.4",
		"localhost:5000/etcd:3.5.21-0":      "3.5.21",
		"registry.k8s.io/etcd:3.6.0-rc.1-0": "3.6.0-rc.1",
	} {
		if got := VersionOf(image); got != want {
			t.Errorf("etcdVersionOf(%s) = %s, want %s", image, got, want)
		}
	}
}

func TestCheckEtcdMembers(t *testing.T) {
	t.Parallel()
	good := func() ([]Member, map[string]Status) {
		members := []Member{{"1", timeline.FixtureControlPlanes[0], false}, {"2", timeline.FixtureControlPlanes[1], false}, {"3", timeline.FixtureControlPlanes[2], false}}
		statuses := map[string]Status{
			timeline.FixtureControlPlanes[0]: {"1", "2", "3.6.5"},
			timeline.FixtureControlPlanes[1]: {"2", "2", "3.6.5"},
			timeline.FixtureControlPlanes[2]: {"3", "2", "3.6.5"},
		}
		return members, statuses
	}
	for _, tc := range []struct {
		name   string
		change func([]Member, map[string]Status) []Member
		want   string
	}{
		{"healthy", func(m []Member, _ map[string]Status) []Member { return m }, ""},
		{"a member short", func(m []Member, s map[string]Status) []Member {
			delete(s, timeline.FixtureControlPlanes[2])
			return m[:2]
		}, "2 members, want 3"},
		{"a learner", func(m []Member, _ map[string]Status) []Member { m[2].IsLearner = true; return m }, "ha-control-plane3 is a learner"},
		{"an old member", func(m []Member, s map[string]Status) []Member {
			s[timeline.FixtureControlPlanes[1]] = Status{"2", "2", "3.5.21"}
			return m
		}, "runs etcd 3.5.21, want 3.6.5"},
		{"split leadership", func(m []Member, s map[string]Status) []Member {
			s[timeline.FixtureControlPlanes[0]] = Status{"1", "1", "3.6.5"}
			return m
		}, "disagree on the leader"},
		{"a stranger", func(m []Member, _ map[string]Status) []Member {
			return append(m, Member{"4", "old-node", false})
		}, `member "old-node" is not a control-plane node`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			members, statuses := good()
			err := CheckMembers(tc.change(members, statuses), statuses, timeline.FixtureControlPlanes, "3.6.5")
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("want an error with %q, got %v", tc.want, err)
			}
		})
	}
}

func TestEtcdKeys(t *testing.T) {
	t.Parallel()
	// what kubectl get configmaps -o json lists after applying the manifest
	var items []map[string]interface{}
	for _, doc := range strings.Split(KeysManifest("tok"), "---\n") {
		var obj map[string]interface{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, doc)
		}
		if obj["kind"] == "ConfigMap" {
			items = append(items, obj)
		}
	}
	if len(items) != Keys {
		t.Fatalf("%d ConfigMaps, want %d", len(items), Keys)
	}
	items = append(items, map[string]interface{}{"metadata": map[string]interface{}{"name": "kube-root-ca.crt"}, "data": map[string]interface{}{"ca.crt": "..."}})
	list := func(items []map[string]interface{}) string {
		b, err := json.Marshal(map[string]interface{}{"items": items})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := CheckKeys(list(items), "tok"); err != nil {
		t.Errorf("the manifest's own keys: %v", err)
	}
	if err := CheckKeys(list(items), "other"); err == nil || !strings.Contains(err.Error(), `key-00 holds "tok-00", want "other-00"`) {
		t.Errorf("want a changed value reported, got %v", err)
	}
	if err := CheckKeys(list(items[1:]), "tok"); err == nil || !strings.Contains(err.Error(), "key-00 is missing") {
		t.Errorf("want a lost key reported, got %v", err)
	}
}
