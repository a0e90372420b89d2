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

package preflight

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
)

// kindAdvised are the limits of actions.InotifyAdvice: instances, watches.
var kindAdvised = InotifyCount{Instances: 512, Watches: 524288}

// InotifyCount is a number of inotify instances and watches.
type InotifyCount struct {
	Instances, Watches int
}

// NodeInotify is what nodeutils.InotifyScript printed on one node.
type NodeInotify struct {
	// Limit is the lower of the host's limit and the node's user
	// namespace's, per user.
	Limit InotifyCount
	// Root is what the node's root processes hold (the kubelet runs as
	// root), Kubelet what the kubelet holds of it.
	Root, Kubelet InotifyCount
}

// ParseInotify parses nodeutils.InotifyScript's output.
func ParseInotify(out string) (NodeInotify, error) {
	var ni NodeInotify
	haveLimits := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 5 && fields[0] == "limits":
			var values [4]int
			for i, f := range fields[1:] {
				if f == "-" {
					values[i] = -1
					continue
				}
				v, err := strconv.Atoi(f)
				if err != nil {
					return ni, errors.Errorf("unexpected inotify limits %q", line)
				}
				values[i] = v
			}
			if values[0] < 0 || values[1] < 0 {
				return ni, errors.Errorf("the kernel reports no inotify limits: %q", line)
			}
			ni.Limit = InotifyCount{Instances: lower(values[0], values[2]), Watches: lower(values[1], values[3])}
			haveLimits = true
		case len(fields) >= 4 && fields[0] == "fd":
			uid, err1 := strconv.Atoi(fields[1])
			watches, err2 := strconv.Atoi(fields[2])
			if err1 != nil || err2 != nil {
				return ni, errors.Errorf("unexpected inotify instance line %q", line)
			}
			if uid != 0 {
				continue
			}
			ni.Root.Instances++
			ni.Root.Watches += watches
			if strings.Join(fields[3:], " ") == "kubelet" {
				ni.Kubelet.Instances++
				ni.Kubelet.Watches += watches
			}
		case line == "":
		default:
			return ni, errors.Errorf("unexpected line %q in the inotify listing", line)
		}
	}
	if !haveLimits {
		return ni, errors.Errorf("no inotify limits in %q", out)
	}
	return ni, nil
}

// lower is the lower of a limit and an optional one (-1: none).
func lower(limit, optional int) int {
	if optional >= 0 && optional < limit {
		return optional
	}
	return limit
}

// InotifyVerdict is what InotifyHeadroom decided.
type InotifyVerdict struct {
	// Refuse is the error to stop with, Warn a warning to print; both
	// empty when there is room.
	Refuse, Warn string
}

// InotifyHeadroom decides whether the kubelets the upgrade restarts can
// get their inotify instances and watches back. cluster are this cluster's
// nodes, neighbours the other kind nodes on the same host: with rootful
// providers (no user namespaces) every node's root processes count against
// the host's one per-user limit. Restarting a node's kubelet and moving its
// pods needs, at once, up to what that node holds now: refused when fewer
// are free than the busiest node holds, a warning when fewer than twice
// that (processes outside kind's nodes hold some too, which a node cannot
// see).
func InotifyHeadroom(cluster, neighbours map[string]NodeInotify) InotifyVerdict {
	if len(cluster) == 0 {
		return InotifyVerdict{}
	}
	var limit, used, clusterUsed, busiest, busiestKubelet InotifyCount
	busiestNode := ""
	names := make([]string, 0, len(cluster))
	for name := range cluster {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		ni := cluster[name]
		if i == 0 || ni.Limit.Instances < limit.Instances {
			limit.Instances = ni.Limit.Instances
		}
		if i == 0 || ni.Limit.Watches < limit.Watches {
			limit.Watches = ni.Limit.Watches
		}
		clusterUsed.Instances += ni.Root.Instances
		clusterUsed.Watches += ni.Root.Watches
		if busiestNode == "" || ni.Root.Instances > busiest.Instances {
			busiest, busiestKubelet, busiestNode = ni.Root, ni.Kubelet, name
		}
	}
	used = clusterUsed
	for _, ni := range neighbours {
		used.Instances += ni.Root.Instances
		used.Watches += ni.Root.Watches
	}
	type dim struct {
		sysctl                                       string
		limit, used, cluster, need, kubelet, advised int
	}
	dims := []dim{
		{"fs.inotify.max_user_instances", limit.Instances, used.Instances, clusterUsed.Instances, busiest.Instances, busiestKubelet.Instances, kindAdvised.Instances},
		{"fs.inotify.max_user_watches", limit.Watches, used.Watches, clusterUsed.Watches, busiest.Watches, busiestKubelet.Watches, kindAdvised.Watches},
	}
	var refuse, warn []string
	var raise []string
	for _, d := range dims {
		free := d.limit - d.used
		if free >= 2*d.need {
			continue
		}
		left := fmt.Sprintf("which leaves at most %d free", free)
		if free < 0 {
			left = fmt.Sprintf("%d more than the limit, which leaves none free", -free)
		}
		desc := fmt.Sprintf("%s is %d, of which the root processes of kind's nodes on this host hold %d (this cluster's %d node(s) %d, %d other node(s) the rest), %s; restarting a node's kubelet and moving its pods needs up to %d at once (what %s holds now, its kubelet %d)",
			d.sysctl, d.limit, d.used, len(cluster), d.cluster, len(neighbours), left, d.need, busiestNode, d.kubelet)
		want := max(d.advised, 2*(d.used+d.need))
		raise = append(raise, fmt.Sprintf("%s=%d", d.sysctl, want))
		if free < d.need {
			refuse = append(refuse, desc)
		} else {
			warn = append(warn, desc)
		}
	}
	fix := "raise the host's limits as kind's known-issues page advises, as root on the host (`sysctl -w " + strings.Join(raise, " ") + "`; kind's advice is `" + actions.InotifyAdvice + "`)"
	var v InotifyVerdict
	if len(refuse) > 0 {
		v.Refuse = "the host's inotify limits leave too little room for the kubelets this upgrade restarts: a kubelet that cannot get its inotify instances exits at start (`inotify_init: too many open files`) and leaves its node NotReady half-way through the upgrade:\n  " +
			strings.Join(refuse, "\n  ") + "\n" + fix + ", then run this command again"
	} else if len(warn) > 0 {
		v.Warn = "the host's inotify limits are close to what kind's nodes hold (" + strings.Join(warn, "; ") + "), and processes outside kind's nodes, which cannot be counted from a node, hold some too: if a kubelet does not come back (`inotify_init: too many open files` in its log), " + fix + " and run this command again"
	}
	return v
}

// checkInotify reads every node's inotify limits and use, this cluster's
// and the other kind nodes' on the host, and refuses an upgrade whose
// kubelet restarts could find no instance free. A neighbour that does not
// answer holds nothing (its container is stopped) and is left out.
func checkInotify(ctx *actions.Context) error {
	read := func(n nodes.Node) (NodeInotify, error) {
		out, err := exec.Output(nodeutils.InotifyScript.Command(ctx, n))
		if err != nil {
			return NodeInotify{}, errors.Wrapf(err, "failed to read the inotify limits and use of node %q", n)
		}
		ni, err := ParseInotify(string(out))
		return ni, errors.Wrapf(err, "failed to read the inotify limits and use of node %q", n)
	}
	all := append(append([]nodes.Node{}, ctx.Nodes...), ctx.Neighbours...)
	results := make([]NodeInotify, len(all))
	errs := make([]error, len(all))
	if err := actions.OnNodes(all, func(i int, n nodes.Node) error {
		results[i], errs[i] = read(n)
		if i < len(ctx.Nodes) {
			return errs[i]
		}
		return nil
	}); err != nil {
		return err
	}
	cluster, neighbours := map[string]NodeInotify{}, map[string]NodeInotify{}
	for i, n := range all {
		switch {
		case i < len(ctx.Nodes):
			cluster[n.String()] = results[i]
		case errs[i] == nil:
			neighbours[n.String()] = results[i]
		default:
			ctx.Logger.V(1).Infof("not counting node %s: %v", n, errs[i])
		}
	}
	v := InotifyHeadroom(cluster, neighbours)
	if v.Warn != "" {
		ctx.Logger.Warn(v.Warn)
	}
	if v.Refuse != "" {
		return errors.New(v.Refuse)
	}
	return nil
}
