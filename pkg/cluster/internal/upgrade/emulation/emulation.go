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

// Package emulation decides the compatibility-version arguments
// (KEP-4330) of the control plane: --emulated-version on kube-apiserver,
// kube-controller-manager and kube-scheduler, and
// --emulation-forward-compatible on kube-apiserver, kept in the extraArgs
// of kubeadm's ClusterConfiguration so that every later `kubeadm upgrade`
// renders them. Its functions are pure: the caller reads and writes the
// cluster.
package emulation

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

// The arguments this package decides, as kubeadm's extraArgs name them.
const (
	EmulatedVersion   = "emulated-version"
	ForwardCompatible = "emulation-forward-compatible"
)

// None is the value of --emulated-version that removes the emulation.
const None = "none"

// Component is a control-plane component that takes --emulated-version,
// and the ClusterConfiguration section kubeadm renders it from.
type Component struct {
	Section, Name string
}

// Components are the components that take --emulated-version; only the
// first, kube-apiserver, takes --emulation-forward-compatible.
var Components = []Component{
	{kube.SectionAPIServer, "kube-apiserver"},
	{kube.SectionControllerManager, "kube-controller-manager"},
	{kube.SectionScheduler, "kube-scheduler"},
}

// Floor is the lowest version any component emulates: compatibility
// versions begin with Kubernetes 1.31.
var Floor = semver.MustParse("1.31.0")

// MaxSkew is how many minor versions below its own a component emulates
// at most.
const MaxSkew = 3

// ForwardCompatibleSince is the first kube-apiserver with
// --emulation-forward-compatible.
var ForwardCompatibleSince = semver.MustParse("1.33.0")

// Args are the emulation arguments of the components' extraArgs: by
// section, then argument name, its value. An argument that is absent is
// unset.
type Args map[string]map[string]string

// FromConfig returns the emulation arguments cfg sets.
func FromConfig(cfg *kube.ClusterConfiguration) Args {
	args := Args{}
	for _, c := range Components {
		for _, name := range []string{EmulatedVersion, ForwardCompatible} {
			if value, ok := cfg.Section(c.Section).ExtraArgs.Get(name); ok {
				args.set(c.Section, name, value)
			}
		}
	}
	return args
}

func (a Args) set(section, name, value string) {
	if a[section] == nil {
		a[section] = map[string]string{}
	}
	a[section][name] = value
}

func (a Args) get(section, name string) (string, bool) {
	v, ok := a[section][name]
	return v, ok
}

func (a Args) unset(section, name string) {
	delete(a[section], name)
	if len(a[section]) == 0 {
		delete(a, section)
	}
}

// Empty reports whether no argument is set.
func (a Args) Empty() bool {
	return len(a) == 0
}

// Equal reports whether a and b set the same arguments to the same values.
func (a Args) Equal(b Args) bool {
	if len(a) != len(b) {
		return false
	}
	for section, args := range a {
		if len(args) != len(b[section]) {
			return false
		}
		for name, value := range args {
			if other, ok := b.get(section, name); !ok || other != value {
				return false
			}
		}
	}
	return true
}

func (a Args) clone() Args {
	out := Args{}
	for section, args := range a {
		for name, value := range args {
			out.set(section, name, value)
		}
	}
	return out
}

// Choice is what the user asked of the emulation.
type Choice struct {
	// Version is "" to keep the cluster's, None to remove it, else the
	// version to emulate, "1.35".
	Version string
	// ForwardCompatible is nil to keep kube-apiserver's
	// --emulation-forward-compatible as it is, else whether to set it.
	ForwardCompatible *bool
}

// Asked reports whether the user asked anything of the emulation.
func (c Choice) Asked() bool {
	return c.Version != "" || c.ForwardCompatible != nil
}

// versionFlag is an --emulated-version value the user gives: a minor
// version, no patch, no "v".
var versionFlag = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

// CheckChoice checks what the user asked, before the cluster is looked
// at; name and fcName are how messages name the two choices.
func CheckChoice(c Choice, name, fcName string) error {
	switch {
	case c.Version == "" || c.Version == None:
	case !versionFlag.MatchString(c.Version):
		return errors.Errorf("%s must be a Kubernetes minor version such as 1.35 (no patch, no \"v\"), or %q to remove the emulation; not %q", name, None, c.Version)
	}
	if c.Version == None && c.ForwardCompatible != nil && *c.ForwardCompatible {
		return errors.Errorf("%s=true needs an emulation: it cannot go with %s=%s", fcName, name, None)
	}
	return nil
}

// Desired returns the arguments the control plane is to run with at
// target: current (the cluster's) changed as c asks. Without a version to
// keep it, kube-apiserver's --emulation-forward-compatible is dropped
// (kube-apiserver refuses it without an older emulation, and the other
// components do not know it).
func Desired(current Args, c Choice, target *semver.Version) Args {
	out := current.clone()
	switch c.Version {
	case "":
	case None:
		for _, comp := range Components {
			out.unset(comp.Section, EmulatedVersion)
			out.unset(comp.Section, ForwardCompatible)
		}
	default:
		for _, comp := range Components {
			out.set(comp.Section, EmulatedVersion, c.Version)
		}
	}
	apiServer := Components[0].Section
	for _, comp := range Components[1:] {
		out.unset(comp.Section, ForwardCompatible)
	}
	if c.ForwardCompatible != nil {
		if *c.ForwardCompatible {
			out.set(apiServer, ForwardCompatible, "true")
		} else {
			out.unset(apiServer, ForwardCompatible)
		}
		return out
	}
	// kept as it was, while it can be
	if v, ok := out.get(apiServer, EmulatedVersion); !ok || !olderMinor(v, target) {
		out.unset(apiServer, ForwardCompatible)
	}
	return out
}

// olderMinor reports whether the emulation value v is a minor version
// older than target's.
func olderMinor(v string, target *semver.Version) bool {
	ev, err := ParseValue(v)
	return err == nil && ev != nil && (ev.Major() < target.Major() || (ev.Major() == target.Major() && ev.Minor() < target.Minor()))
}

// ParseValue reads an --emulated-version value as kube-apiserver does:
// "1.35", "kube=1.35", or a comma-separated list with one kube=1.35
// (other components' entries are left alone). It returns nil for an empty
// value, which emulates nothing.
func ParseValue(v string) (*semver.Version, error) {
	var kubeVersion string
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		component, value, paired := strings.Cut(part, "=")
		if !paired {
			component, value = "kube", part
		}
		if component == "kube" {
			kubeVersion = value
		}
	}
	if kubeVersion == "" {
		return nil, nil
	}
	ver, err := semver.StrictNewVersion(strings.TrimPrefix(kubeVersion, "v") + ".0")
	if err != nil {
		return nil, errors.Errorf("%q is not a minor version such as 1.35", kubeVersion)
	}
	return ver, nil
}

// Range returns the versions a component at target emulates: from
// target's minor minus MaxSkew, never below Floor, to target's minor.
// ok is false when there are none (a target before Floor).
func Range(target *semver.Version) (lowest, highest *semver.Version, ok bool) {
	highest = semver.New(target.Major(), target.Minor(), 0, "", "")
	lowest = Floor
	if target.Minor() >= MaxSkew {
		if l := semver.New(target.Major(), target.Minor()-MaxSkew, 0, "", ""); l.GreaterThan(lowest) {
			lowest = l
		}
	}
	return lowest, highest, !highest.LessThan(lowest)
}

// RangeText is Range as a message says it: "1.33..1.36".
func RangeText(target *semver.Version) string {
	lowest, highest, ok := Range(target)
	if !ok {
		return "none"
	}
	return minor(lowest) + ".." + minor(highest)
}

func minor(v *semver.Version) string {
	return strconv.FormatUint(v.Major(), 10) + "." + strconv.FormatUint(v.Minor(), 10)
}

// rule is the range's rule, for messages.
const rule = "the target's minor version and the 3 before it, never below 1.31"

// Check refuses desired arguments the target's binaries would refuse at
// start (their static pods would crash-loop): an emulated version outside
// Range, --emulation-forward-compatible before ForwardCompatibleSince or
// without an older emulation. origin says, for each argument, how the
// user set it: the flag they gave, or the cluster's configuration they
// kept.
func Check(desired Args, target *semver.Version, origin func(name string) string) error {
	for _, comp := range Components {
		v, ok := desired.get(comp.Section, EmulatedVersion)
		if !ok {
			continue
		}
		ev, err := ParseValue(v)
		if err != nil {
			return errors.Wrapf(err, "%s: %s of %s", origin(EmulatedVersion), EmulatedVersion, comp.Name)
		}
		if ev == nil {
			continue
		}
		lowest, highest, ok := Range(target)
		if !ok {
			return errors.Errorf("%s: %s v%s emulates no other version (compatibility versions begin with 1.31): upgrade to v1.31 or later first", origin(EmulatedVersion), comp.Name, target)
		}
		if ev.LessThan(lowest) || ev.GreaterThan(highest) {
			return errors.Errorf("%s: %s v%s refuses --%s=%s: the allowed range is %s (%s)", origin(EmulatedVersion), comp.Name, target, EmulatedVersion, v, RangeText(target), rule)
		}
	}
	apiServer := Components[0]
	if v, ok := desired.get(apiServer.Section, ForwardCompatible); ok {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return errors.Errorf("%s: %s=%q is not a boolean", origin(ForwardCompatible), ForwardCompatible, v)
		}
		if !on {
			return nil
		}
		if target.LessThan(ForwardCompatibleSince) {
			return errors.Errorf("%s: %s v%s has no --%s (it came with v1.33)", origin(ForwardCompatible), apiServer.Name, target, ForwardCompatible)
		}
		emulated, _ := desired.get(apiServer.Section, EmulatedVersion)
		if !olderMinor(emulated, target) {
			return errors.Errorf("%s: %s v%s refuses --%s=true unless it emulates an older version (set %s below %s)", origin(ForwardCompatible), apiServer.Name, target, ForwardCompatible, EmulatedVersion, minor(target))
		}
	}
	return nil
}

// Change is one change of the kubeadm configuration: an argument set to
// one value in some sections, or removed from them.
type Change struct {
	// Sections are the ClusterConfiguration's sections, in Components'
	// order.
	Sections []string `json:"sections"`
	Arg      string   `json:"arg"`
	// Value is the new value, "" when Removed.
	Value   string `json:"value,omitempty"`
	Removed bool   `json:"removed,omitempty"`
	// Was is the value before, "" when it was unset.
	Was string `json:"was,omitempty"`
}

// String says the change as the dry-run plan does: "apiServer,
// controllerManager, scheduler extraArgs emulated-version=1.36 (was:
// none)".
func (c Change) String() string {
	was := c.Was
	if was == "" {
		was = "none"
	}
	what := c.Arg + "=" + c.Value
	if c.Removed {
		what = c.Arg + " removed"
	}
	return fmt.Sprintf("%s extraArgs %s (was: %s)", strings.Join(c.Sections, ", "), what, was)
}

// Changes lists how desired differs from current, argument by argument,
// sections that change alike together.
func Changes(current, desired Args) []Change {
	var out []Change
	for _, name := range []string{EmulatedVersion, ForwardCompatible} {
		index := map[string]int{}
		for _, comp := range Components {
			was, had := current.get(comp.Section, name)
			value, has := desired.get(comp.Section, name)
			if had == has && was == value {
				continue
			}
			c := Change{Arg: name, Value: value, Removed: !has, Was: was}
			key := fmt.Sprintf("%v\x00%s\x00%s", c.Removed, c.Value, c.Was)
			i, ok := index[key]
			if !ok {
				i = len(out)
				index[key] = i
				out = append(out, c)
			}
			out[i].Sections = append(out[i].Sections, comp.Section)
		}
	}
	return out
}

// ArgChanges are the changes of kubeadm's extraArgs that make current
// desired.
func ArgChanges(current, desired Args) kube.ArgChanges {
	out := kube.ArgChanges{}
	for _, c := range Changes(current, desired) {
		for _, section := range c.Sections {
			if out[section] == nil {
				out[section] = map[string]*string{}
			}
			if c.Removed {
				out[section][c.Arg] = nil
			} else {
				value := c.Value
				out[section][c.Arg] = &value
			}
		}
	}
	return out
}

// Mismatch says how the command a component's static pod runs differs
// from what desired asks of it, "" when it does not: its
// --emulated-version emulates the same version (an empty or absent one
// none), and its --emulation-forward-compatible is true exactly when
// desired sets it. component is a static pod's name ("etcd" has nothing
// to match).
func Mismatch(desired Args, component string, command []string) string {
	section := ""
	for _, comp := range Components {
		if comp.Name == component {
			section = comp.Section
		}
	}
	if section == "" {
		return ""
	}
	flags := commandFlags(command)
	want, _ := desired.get(section, EmulatedVersion)
	got, set := flags[EmulatedVersion]
	if sameEmulation(want, got) != nil {
		return fmt.Sprintf("%s runs %s, not %s", component, flagText(EmulatedVersion, got, set), flagText(EmulatedVersion, want, want != ""))
	}
	wantFC := isTrue(desired[section][ForwardCompatible])
	gotFC, fcSet := flags[ForwardCompatible]
	if wantFC != isTrue(gotFC) {
		return fmt.Sprintf("%s runs %s, not %s", component, flagText(ForwardCompatible, gotFC, fcSet), flagText(ForwardCompatible, "true", wantFC))
	}
	return ""
}

// sameEmulation returns nil when the values a and b emulate the same
// version (an empty value: none).
func sameEmulation(a, b string) error {
	av, aerr := ParseValue(a)
	bv, berr := ParseValue(b)
	switch {
	case aerr != nil || berr != nil:
		if a == b {
			return nil
		}
		return errors.New("different")
	case av == nil || bv == nil:
		if av == nil && bv == nil {
			return nil
		}
		return errors.New("different")
	case !av.Equal(bv):
		return errors.New("different")
	}
	return nil
}

func isTrue(v string) bool {
	on, err := strconv.ParseBool(v)
	return err == nil && on
}

func flagText(name, value string, set bool) string {
	if !set {
		return "without --" + name
	}
	return "--" + name + "=" + value
}

// commandFlags returns the --name=value flags of a command, the last
// value of a flag given twice (the one the component sees); a flag
// without "=" has the value "true".
func commandFlags(command []string) map[string]string {
	flags := map[string]string{}
	for _, arg := range command {
		if !strings.HasPrefix(arg, "--") {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !ok {
			value = "true"
		}
		flags[name] = value
	}
	return flags
}
