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
	"context"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
)

// Systemctl runs `systemctl <verb> <unit>` on the node.
func Systemctl(ctx context.Context, n nodes.Node, verb, unit string) error {
	if err := n.CommandContext(ctx, "systemctl", verb, unit).Run(); err != nil {
		return errors.Wrapf(err, "failed to %s %s on %s", verb, unit, n)
	}
	return nil
}

// UnitState is what `systemctl show` tells of a unit.
type UnitState struct {
	// ActiveState and SubState are e.g. "active" "running", or
	// "activating" "auto-restart" between the runs of a unit that exits
	// and is restarted.
	ActiveState, SubState string
	// NRestarts counts the restarts systemd made after the unit exited.
	NRestarts int
}

// Running reports whether the unit runs.
func (u UnitState) Running() bool {
	return u.ActiveState == "active" && u.SubState == "running"
}

// ShowUnit reads unit's state on the node.
func ShowUnit(ctx context.Context, n nodes.Node, unit string) (UnitState, error) {
	out, err := exec.Output(n.CommandContext(ctx, "systemctl", "show", unit, "--property=ActiveState,SubState,NRestarts"))
	if err != nil {
		return UnitState{}, errors.Wrapf(err, "failed to read the state of %s on %s", unit, n)
	}
	u, err := ParseUnitState(string(out))
	return u, errors.Wrapf(err, "failed to read the state of %s on %s", unit, n)
}

// ParseUnitState parses `systemctl show --property=ActiveState,SubState,NRestarts`.
func ParseUnitState(out string) (UnitState, error) {
	var u UnitState
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return u, errors.Errorf("unexpected systemctl show output %q", out)
		}
		switch key {
		case "ActiveState":
			u.ActiveState = value
		case "SubState":
			u.SubState = value
		case "NRestarts":
			n, err := strconv.Atoi(value)
			if err != nil {
				return u, errors.Errorf("unexpected NRestarts in %q", out)
			}
			u.NRestarts = n
		default:
			continue
		}
		seen++
	}
	if seen != 3 {
		return u, errors.Errorf("unexpected systemctl show output %q", out)
	}
	return u, nil
}

// UnitLog returns the last lines of unit's journal on the node, oldest
// first, systemd's own lines about the unit among them.
func UnitLog(ctx context.Context, n nodes.Node, unit string, lines int) ([]string, error) {
	out, err := exec.Output(UnitLogScript.Command(ctx, n, unit, strconv.Itoa(lines)))
	if err != nil {
		return nil, errors.Wrapf(err, "failed to read the log of %s on %s", unit, n)
	}
	text := strings.TrimRight(string(out), "\n")
	if text == "" {
		return nil, nil
	}
	return strings.Split(text, "\n"), nil
}
