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

package kindupgrades

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/upgrades"
	"k8s.io/kubernetes/test/utils/junit"
)

// Type is the shape of the upgrade the tests run across, as kubeadm's
// "x-on-y" jobs and Kubernetes' upgrade suite name them.
type Type string

const (
	// Master upgrades the control plane only (`kind alpha upgrade
	// --skip-phases kubelets`): the kubelets stay at the old version.
	Master Type = "master"
	// Node upgrades the kubelets of a cluster whose control plane is at
	// the target already (after a Master upgrade).
	Node Type = "node"
	// Cluster upgrades the control plane and then the kubelets, in one
	// run.
	Cluster Type = "cluster"
)

// Types are the valid Types, in the order an x-on-y job runs the first
// two.
var Types = []Type{Master, Node, Cluster}

// ParseType reads a Type from its name.
func ParseType(s string) (Type, error) {
	for _, t := range Types {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown upgrade type %q: want master, node or cluster", s)
}

// UpgradeType is the upstream suite's name for t.
func (t Type) UpgradeType() upgrades.UpgradeType {
	switch t {
	case Master:
		return upgrades.MasterUpgrade
	case Node:
		return upgrades.NodeUpgrade
	}
	return upgrades.ClusterUpgrade
}

// Upgrade is the upgrade the tests run across.
type Upgrade struct {
	// Cluster is the kind cluster's name ("" is kind's default, "kind").
	Cluster string
	// Type is the upgrade's shape.
	Type Type
	// Kind is the kind binary that has `kind alpha upgrade` ("" runs
	// "kind" from PATH).
	Kind string
	// Args are the rest of `kind alpha upgrade`'s flags: the source
	// (--image, --image-dir) and any other (-v 1, --wait 10m). Not
	// --name, --skip-phases (from Type), --output or --dry-run.
	Args []string
	// Env is added to the command's environment (for example
	// KIND_EXPERIMENTAL_PROVIDER=podman).
	Env []string
}

// reserved are the flags Upgrade sets itself.
var reserved = []string{"--name", "-n", "--skip-phases", "--output", "-o", "--dry-run"}

// Validate refuses an Upgrade whose Args set what Upgrade sets itself.
func (u Upgrade) Validate() error {
	if _, err := ParseType(string(u.Type)); err != nil {
		return err
	}
	for _, a := range u.Args {
		flag, _, _ := strings.Cut(a, "=")
		for _, r := range reserved {
			if flag == r {
				return fmt.Errorf("Upgrade.Args must not set %s: the cluster is Upgrade.Cluster, --skip-phases comes from Upgrade.Type, and the output is read as JSON", r)
			}
		}
	}
	return nil
}

func (u Upgrade) kind() string {
	if u.Kind == "" {
		return "kind"
	}
	return u.Kind
}

func (u Upgrade) cluster() string {
	if u.Cluster == "" {
		return "kind"
	}
	return u.Cluster
}

// CommandArgs are the arguments of the `kind` command that runs u (a dry
// run when dryRun).
func (u Upgrade) CommandArgs(dryRun bool) []string {
	args := []string{"alpha", "upgrade", "--name", u.cluster()}
	if u.Type == Master {
		args = append(args, "--skip-phases", "kubelets")
	}
	args = append(args, u.Args...)
	args = append(args, "--output", "json")
	if dryRun {
		args = append(args, "--dry-run")
	}
	return args
}

// String is the command line of u, for logs.
func (u Upgrade) String() string {
	return u.kind() + " " + strings.Join(u.CommandArgs(false), " ")
}

// Run runs the upgrade (a dry run when dryRun), writing its JSON events to
// events and its status lines to status, and returns the events. Ctrl-C
// (ctx cancelled) interrupts kind as Ctrl-C in a terminal does, so that
// it cleans up; running it again finishes the upgrade.
func (u Upgrade) Run(ctx context.Context, dryRun bool, events, status io.Writer) ([]Event, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, u.kind(), u.CommandArgs(dryRun)...)
	cmd.Env = append(os.Environ(), u.Env...)
	cmd.Stdout = io.MultiWriter(&stdout, events)
	cmd.Stderr = io.MultiWriter(&stderr, status)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	runErr := cmd.Run()
	evs, parseErr := ParseEvents(stdout.Bytes())
	if runErr != nil {
		if why := failure(stderr.String()); why != "" {
			return evs, fmt.Errorf("%s: %v: %s", u, runErr, why)
		}
		return evs, fmt.Errorf("%s: %v", u, runErr)
	}
	if parseErr != nil {
		return evs, fmt.Errorf("%s: %v", u, parseErr)
	}
	return evs, nil
}

// failure is why kind failed, from its stderr: its ERROR: message (all
// its lines, without the stack trace kind adds at -v 1 and above), or else
// the last line.
func failure(stderr string) string {
	if i := strings.LastIndex(stderr, "ERROR: "); i >= 0 {
		why := stderr[i:]
		if j := strings.Index(why, "Stack Trace"); j >= 0 {
			why = why[:j]
		}
		return strings.TrimSpace(why)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Event is the part of an event of `kind alpha upgrade --output json` this
// package reads (the schema is in the upgrade's output docs).
type Event struct {
	Time    time.Time       `json:"time"`
	Kind    string          `json:"kind"`
	Event   string          `json:"event"`
	Outcome string          `json:"outcome,omitempty"`
	Message string          `json:"message,omitempty"`
	Error   string          `json:"error,omitempty"`
	Plan    json.RawMessage `json:"plan,omitempty"`
}

// ParseEvents reads the JSON lines of `kind alpha upgrade --output json`.
func ParseEvents(out []byte) ([]Event, error) {
	var evs []Event
	scanner := bufio.NewScanner(bytes.NewReader(out))
	scanner.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for scanner.Scan() {
		line := bytes.TrimSpace(scanner.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return evs, fmt.Errorf("not an event of --output json: %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs, scanner.Err()
}

// Plan is the part of the dry run's plan this package reads.
type Plan struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Nodes []struct {
		Name string `json:"name"`
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"nodes"`
}

// PlanOf finds the plan in a dry run's events; a dry run with nothing to
// do has none, and the error says so. A chain of targets plans each
// target: the upgrade goes from the first plan's version to the last's,
// with the last plan's nodes.
func PlanOf(evs []Event) (*Plan, error) {
	var found *Plan
	for _, ev := range evs {
		if ev.Kind == "plan" && len(ev.Plan) > 0 {
			var p Plan
			if err := json.Unmarshal(ev.Plan, &p); err != nil {
				return nil, fmt.Errorf("failed to read the dry run's plan: %v", err)
			}
			if found != nil {
				p.From = found.From
			}
			found = &p
		}
	}
	if found != nil {
		return found, nil
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if ev := evs[i]; ev.Kind == "upgrade" && ev.Event == "finished" {
			if ev.Outcome == "skipped" && ev.Message != "" {
				return nil, fmt.Errorf("nothing to upgrade: %s", ev.Message)
			}
			if ev.Error != "" {
				return nil, fmt.Errorf("the dry run failed: %s", ev.Error)
			}
		}
	}
	return nil, fmt.Errorf("the dry run printed no plan")
}

// Context is the upstream suite's UpgradeContext of an upgrade of type t
// with plan p: the version it starts from and the target. A Node upgrade
// needs the control plane at the target already, and every type needs
// something to upgrade.
func Context(t Type, p *Plan) (*upgrades.UpgradeContext, error) {
	to, err := version.ParseSemantic(p.To)
	if err != nil {
		return nil, fmt.Errorf("the plan's target %q: %v", p.To, err)
	}
	cp, err := version.ParseSemantic(p.From)
	if err != nil {
		return nil, fmt.Errorf("the plan's control-plane version %q: %v", p.From, err)
	}
	from := cp
	switch t {
	case Master, Cluster:
		if !cp.LessThan(to) {
			return nil, fmt.Errorf("the control plane is at %s already: nothing for a %s upgrade to do", p.From, t)
		}
	case Node:
		if cp.LessThan(to) {
			return nil, fmt.Errorf("a node upgrade needs the control plane at %s first, but it is at %s: run the master upgrade before", p.To, p.From)
		}
		from = nil
		for _, n := range p.Nodes {
			v, err := version.ParseSemantic(n.From)
			if err != nil {
				return nil, fmt.Errorf("node %s's version %q: %v", n.Name, n.From, err)
			}
			if v.LessThan(to) && (from == nil || v.LessThan(from)) {
				from = v
			}
		}
		if from == nil {
			return nil, fmt.Errorf("every node is at %s already: nothing for a node upgrade to do", p.To)
		}
	default:
		return nil, fmt.Errorf("unknown upgrade type %q", t)
	}
	return &upgrades.UpgradeContext{Versions: []upgrades.VersionContext{{Version: *from}, {Version: *to}}}, nil
}

// Describe adds a Ginkgo container named text with one spec that runs
// tests across the upgrade upgrade returns (called when the spec runs,
// after flags were parsed), through the upstream suite's RunUpgradeSuite:
// every test's Setup, then the upgrade while each test's Test runs, then
// each Test's checks after it and every Teardown. With the framework's
// --report-dir it writes Kubernetes' junit_<report-prefix>upgrades.xml
// (a test case per test, failed when the test failed, and one for the
// upgrade itself) and the upgrade's events (--output json) as
// kind-upgrade-<report-prefix>events.jsonl.
//
// Call it at the top level of a Ginkgo suite (var _ = Describe(...)), as
// the frameworks of the tests are Ginkgo nodes.
func Describe(text string, tests []upgrades.Test, upgrade func() (Upgrade, error)) bool {
	described = append(described, text)
	return ginkgo.Describe(text, func() {
		frameworks := upgrades.CreateUpgradeFrameworks(tests)
		ginkgo.It("keeps working during and after kind alpha upgrade", func(ctx context.Context) {
			u, err := upgrade()
			framework.ExpectNoError(err, "the upgrade to run")
			framework.ExpectNoError(u.Validate(), "the upgrade to run")
			RunSuite(ctx, u, tests, frameworks)
		})
	})
}

// described are the texts Describe was given.
var described []string

// Focus makes c run only the specs Describe added, unless c already
// focuses or filters by label: the upstream tests' packages register
// specs of their own too (631 in v1.37.2, through the packages they
// import), which would otherwise run around the upgrade's.
func Focus(c *types.SuiteConfig) {
	if len(c.FocusStrings) > 0 || len(c.FocusFiles) > 0 || c.LabelFilter != "" {
		return
	}
	for _, text := range described {
		c.FocusStrings = append(c.FocusStrings, regexp.QuoteMeta(text))
	}
}

// RunSuite is the body of Describe's spec: call it from a spec of your
// own with frameworks from upgrades.CreateUpgradeFrameworks(tests), made
// in the spec's container.
func RunSuite(ctx context.Context, u Upgrade, tests []upgrades.Test, frameworks map[string]*framework.Framework) {
	// kind's status lines as they come (a long upgrade shows its
	// progress), and in the spec's report
	status := io.MultiWriter(ginkgo.GinkgoWriter, os.Stderr)
	ginkgo.By("planning " + u.String() + " (dry run)")
	evs, err := u.Run(ctx, true, io.Discard, status)
	framework.ExpectNoError(err, "the dry run of the upgrade")
	plan, err := PlanOf(evs)
	framework.ExpectNoError(err)
	upgCtx, err := Context(u.Type, plan)
	framework.ExpectNoError(err)
	framework.Logf("%s upgrade %s -> %s of kind cluster %q", u.Type, upgCtx.Versions[0].Version.String(), upgCtx.Versions[1].Version.String(), u.cluster())

	suite := &junit.TestSuite{Name: fmt.Sprintf("kind alpha upgrade (%s upgrade)", u.Type)}
	upgradeCase := &junit.TestCase{Name: "[sig-cluster-lifecycle] kind-alpha-upgrade-" + string(u.Type), Classname: "upgrade_tests"}
	suite.TestCases = append(suite.TestCases, upgradeCase)
	rec := &recorder{suite: suite}

	events := io.Discard
	if dir := framework.TestContext.ReportDir; dir != "" {
		f, err := os.Create(filepath.Join(dir, "kind-upgrade-"+framework.TestContext.ReportPrefix+"events.jsonl"))
		framework.ExpectNoError(err, "the file for the upgrade's events")
		defer f.Close()
		events = f
	}
	upgradeFunc := func(ctx context.Context) {
		start := time.Now()
		ginkgo.By("running " + u.String())
		_, err := u.Run(ctx, false, events, status)
		upgradeCase.Time = time.Since(start).Seconds()
		if err != nil {
			rec.fail(upgradeCase.Name, err.Error())
			framework.Failf("the upgrade failed: %v", err)
		}
		framework.Logf("kind alpha upgrade finished in %s", time.Since(start).Round(time.Second))
	}
	upgrades.RunUpgradeSuite(ctx, upgCtx, rec.wrap(tests), frameworks, suite, u.Type.UpgradeType(), upgradeFunc)
}
