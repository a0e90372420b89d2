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
	"regexp"
	"strings"
)

// transientSigns are what kubectl prints when a request failed because an
// API server restarts, a load balancer switches API servers, or etcd elects
// a leader: the same request a moment later can succeed.
var transientSigns = []string{
	"connection refused",
	"was refused - did you specify the right host or port",
	"Unable to connect to the server",
	"connection reset by peer",
	"broken pipe",
	"TLS handshake timeout",
	"i/o timeout",
	"http2: server sent GOAWAY",
	"http2: client connection lost",
	"unexpected EOF",
	"etcdserver: leader changed",
	"etcdserver: request timed out",
	"etcdserver: no leader",
	"etcdserver: too many requests",
	"the server is currently unable to handle the request",
	"the server was unable to return a response in the time allotted",
	"the server has received too many requests",
	"Client.Timeout exceeded while awaiting headers",
}

// forbiddenSign is what kubectl prints for a request RBAC denies. An API
// server that has just restarted denies requests until its RBAC caches
// are synced (seen here right after a control-plane node's kubelet
// restart, for kubernetes-admin listing nodes); anywhere else a denial is
// real.
const forbiddenSign = "is forbidden: User"

// Forbidden reports whether kubectl's output says RBAC denied the request.
func Forbidden(output string) bool {
	return strings.Contains(output, forbiddenSign)
}

// Transient reports whether kubectl's output says the request failed the
// way a restarting or switching API server fails one, so that trying it
// again is right.
func Transient(output string) bool {
	for _, sign := range transientSigns {
		if strings.Contains(output, sign) {
			return true
		}
	}
	return false
}

// maxMessage bounds how much of kubectl's output an error quotes.
const maxMessage = 600

// message returns the end of kubectl's output, on one line, bounded.
func message(output []byte) string {
	msg := strings.Join(strings.Fields(string(output)), " ")
	if len(msg) > maxMessage {
		msg = "..." + msg[len(msg)-maxMessage:]
	}
	return msg
}

// drainAggregate is kubectl drain's line for the error that stopped it;
// pendingOnly is that error when it is only the timeout of waiting for
// evicted pods to go, or a list of those (k8s.io/kubectl's pkg/drain). A
// pod whose eviction was refused (a PodDisruptionBudget) or not yet asked
// for when the time ran out says "global timeout reached" instead.
var (
	drainAggregate = regexp.MustCompile(`(?m)^error: unable to drain node "[^"]*" due to error: (.*), continuing command\.\.\.$`)
	pendingOne     = `error when waiting for pod "[^"]*" in namespace "[^"]*" to terminate: context deadline exceeded`
	pendingOnly    = regexp.MustCompile(`^\[?` + pendingOne + `(, ` + pendingOne + `)*\]?$`)
)

// EvictionsPending reports whether kubectl drain's output says it stopped
// only because its --timeout ran out while evicted pods were still going:
// the node is cordoned and every pod to evict was evicted.
func EvictionsPending(output string) bool {
	m := drainAggregate.FindAllStringSubmatch(output, -1)
	return len(m) == 1 && pendingOnly.MatchString(m[0][1])
}
