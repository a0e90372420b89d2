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

package nodeutils

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
)

// AdminKubeconfig is the kubeconfig kubeadm writes on control-plane nodes.
const AdminKubeconfig = "/etc/kubernetes/admin.conf"

// Kubectl returns a command running the node's kubectl against the cluster
// with the admin kubeconfig. n must be a control-plane node.
func Kubectl(ctx context.Context, n nodes.Node, args ...string) exec.Cmd {
	return n.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig=" + AdminKubeconfig}, args...)...)
}

// StdinKubeconfig is the kubeconfig path of KubectlWith's commands: the
// kubeconfig comes on kubectl's stdin and is written nowhere on the node.
const StdinKubeconfig = "/dev/stdin"

// KubectlWith returns a command running the node's kubectl against the
// cluster with kubeconfig, handed on its stdin: for a node that lacks the
// admin kubeconfig (a worker). A nil kubeconfig is Kubectl's.
func KubectlWith(ctx context.Context, n nodes.Node, kubeconfig []byte, args ...string) exec.Cmd {
	if kubeconfig == nil {
		return Kubectl(ctx, n, args...)
	}
	cmd := n.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig=" + StdinKubeconfig}, args...)...)
	cmd.SetStdin(bytes.NewReader(kubeconfig))
	return cmd
}

// KubectlExitMark begins the line KubectlAllScript prints after each run
// of kubectl, with its exit status (fake nodes print it too). No answer
// of kubectl holds a line beginning so: JSON lines begin with a bracket,
// a quote or a space.
const KubectlExitMark = "kind-upgrade-kubectl-exit"

// KubectlAll returns a command running kubectl on n, as Kubectl does, once
// per request (its arguments), in order, in one command on the node: for
// the several reads of a wait's poll. It stops after the first request
// that fails; ParseKubectlAll reads its output. An argument cannot hold a
// newline.
func KubectlAll(ctx context.Context, n nodes.Node, requests ...[]string) (exec.Cmd, error) {
	params := make([]string, len(requests))
	for i, args := range requests {
		for _, a := range args {
			if strings.Contains(a, "\n") {
				return nil, errors.Errorf("a kubectl argument sent with others holds a newline: %q", a)
			}
		}
		params[i] = strings.Join(args, "\n")
	}
	return KubectlAllScript.Command(ctx, n, params...), nil
}

// KubectlAnswer is what one run of kubectl in KubectlAll printed: its
// stdout when it succeeded, its stdout and stderr when it failed.
type KubectlAnswer struct {
	Output   []byte
	ExitCode int
}

// ParseKubectlAll reads the output of KubectlAll's command for requests
// requests: an answer per request made, all of them unless one failed,
// which is then the last. An output that ends before that was cut short.
func ParseKubectlAll(out []byte, requests int) ([]KubectlAnswer, error) {
	mark := []byte("\n" + KubectlExitMark + " ")
	var answers []KubectlAnswer
	rest := out
	for len(answers) < requests {
		i := bytes.Index(rest, mark)
		if i < 0 {
			return nil, errors.Errorf("the answer of kubectl to %d requests was cut short after %d: %q", requests, len(answers), tail(out))
		}
		line, after, ok := bytes.Cut(rest[i+len(mark):], []byte("\n"))
		if !ok {
			return nil, errors.Errorf("the answer of kubectl to %d requests was cut short after %d: %q", requests, len(answers), tail(out))
		}
		code, err := strconv.Atoi(string(line))
		if err != nil {
			return nil, errors.Errorf("unexpected exit status %q in the answer of kubectl to %d requests", line, requests)
		}
		answer := KubectlAnswer{Output: rest[:i], ExitCode: code}
		rest = after
		if code != 0 {
			// its stderr follows, as the script printed it
			answer.Output = append(append([]byte{}, answer.Output...), bytes.TrimSuffix(rest, []byte("\n"))...)
			return append(answers, answer), nil
		}
		answers = append(answers, answer)
	}
	if len(rest) > 0 {
		return nil, errors.Errorf("unexpected output after the answer of kubectl to %d requests: %q", requests, tail(rest))
	}
	return answers, nil
}

// tail is the end of out, bounded, for an error.
func tail(out []byte) []byte {
	const most = 200
	if len(out) > most {
		return out[len(out)-most:]
	}
	return out
}
