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

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"
)

// Script is a shell script the upgrade runs on a node. Every one is
// registered here, with a name and whether it changes the node. Values
// reach it only as positional parameters ($1...), never inside its text.
type Script struct {
	// Name is the shell's $0 (`sh -c BODY NAME ARGS...`): real shells
	// show it in their messages and in ps, and fake nodes recognise the
	// script by it.
	Name string
	// Mutates is true for a script that changes the node.
	Mutates bool
	// Body is the script.
	Body string
}

// Command returns the command that runs s on n with args as $1...
func (s Script) Command(ctx context.Context, n nodes.Node, args ...string) exec.Cmd {
	return n.CommandContext(ctx, "sh", append([]string{"-c", s.Body, s.Name}, args...)...)
}

// Argv is the argv of s with args, as Command runs it.
func (s Script) Argv(args ...string) []string {
	return append([]string{"sh", "-c", s.Body, s.Name}, args...)
}

var scripts []Script

func register(s Script) Script {
	scripts = append(scripts, s)
	return s
}

// Scripts lists every registered script.
func Scripts() []Script {
	return append([]Script{}, scripts...)
}

// ScriptNamed returns the registered script called name.
func ScriptNamed(name string) (Script, bool) {
	for _, s := range scripts {
		if s.Name == name {
			return s, true
		}
	}
	return Script{}, false
}

// The scripts. Files: see files.go for what each is for.
var (
	// StreamScript creates the folder of $1 and writes stdin to $1.
	StreamScript = register(Script{Name: "kind-upgrade-stream", Mutates: true, Body: `mkdir -p "$(dirname "$1")" && cat > "$1"`})

	// FinishScript gives $2 mode $1 and renames it over $3.
	FinishScript = register(Script{Name: "kind-upgrade-finish", Mutates: true, Body: `chmod "$1" "$2" && mv -f "$2" "$3"`})

	// WriteStringScript writes $3 to $1 with mode $2 through a temporary
	// file renamed over $1.
	WriteStringScript = register(Script{Name: "kind-upgrade-write-string", Mutates: true, Body: `set -e; mkdir -p "$(dirname "$1")"; printf '%s' "$3" > "$1.tmp"; chmod "$2" "$1.tmp"; mv -f "$1.tmp" "$1"`})

	// ExistsScript prints, for each argument, whether it exists; unlike
	// `test -e` it tells "no" apart from a failure to run anything at all.
	ExistsScript = register(Script{Name: "kind-upgrade-exists", Body: `for p; do if [ -e "$p" ]; then echo yes; else echo no; fi; done`})

	// ReadScript prints "yes" and the content of $1, or "no" when $1 does
	// not exist.
	ReadScript = register(Script{Name: "kind-upgrade-read", Body: `if [ -e "$1" ]; then echo yes; cat "$1"; else echo no; fi`})

	// CompareScript prints, for each pair of arguments (src, dest),
	// "missing" when src does not exist, "same" when dest is src (a hard
	// link) or has its content, and "differ" otherwise; it fails when a
	// file cannot be read.
	CompareScript = register(Script{Name: "kind-upgrade-compare", Body: `while [ $# -ge 2 ]; do
if [ ! -e "$1" ]; then echo missing
elif [ ! -e "$2" ]; then echo differ
elif [ "$1" -ef "$2" ]; then echo same
elif cmp -s "$1" "$2"; then echo same
else
	case $? in 1) echo differ ;; *) echo "cannot compare $1 and $2" >&2; exit 2 ;; esac
fi
shift 2
done`})

	// InstallScript installs each pair of arguments (src, dest) as
	// InstallBinaries describes.
	InstallScript = register(Script{Name: "kind-upgrade-install", Mutates: true, Body: `set -e
while [ $# -ge 2 ]; do
ln -f "$1" "$2.new" 2>/dev/null || cp "$1" "$2.new"
chmod 0755 "$2.new"
if [ -e "$2" ]; then ln -f "$2" "$2.old"; fi
mv -f "$2.new" "$2"
shift 2
done`})

	// UnitLogScript prints the last $2 lines of unit $1's journal: what
	// its processes logged and systemd's lines about it ("Started ...",
	// "Main process exited, ..."), which tell its runs apart.
	UnitLogScript = register(Script{Name: "kind-upgrade-unit-log", Body: `journalctl --no-pager -o cat -u "$1" -n "$2"`})

	// PinScript gives each image named after $1 the label $1, in
	// containerd's k8s.io namespace.
	PinScript = register(Script{Name: "kind-upgrade-pin", Mutates: true, Body: `label=$1; shift; for ref; do ctr --namespace=k8s.io images label "$ref" "$label" >/dev/null || exit; done`})

	// KubeadmBusyScript prints "busy" when a process holds the kubeadm
	// lock $1.
	KubeadmBusyScript = register(Script{Name: "kind-upgrade-kubeadm-busy", Body: `if [ -e "$1" ] && ! flock -n "$1" true; then echo busy; fi`})

	// KubeadmWaitScript waits up to $2 seconds for the kubeadm lock $1.
	KubeadmWaitScript = register(Script{Name: "kind-upgrade-kubeadm-wait", Body: `flock -w "$2" "$1" true`})

	// KubeadmProbeScript stages kubeadm (stdin) in a temporary folder,
	// prints its version and the images it needs for that version with
	// the cluster's image settings ($1: ClusterConfiguration.ImagesConfig,
	// to which it adds kubeadm's version), and removes it. The folder is
	// under /var/tmp: kind mounts /tmp noexec. It leaves the node as it
	// was.
	KubeadmProbeScript = register(Script{Name: "kind-upgrade-kubeadm-probe", Body: `set -e
d=$(mktemp -d /var/tmp/kind-upgrade-probe.XXXXXX)
trap 'rm -rf "$d"' EXIT
cat > "$d/kubeadm"
chmod 0755 "$d/kubeadm"
v=$("$d/kubeadm" version -o short)
echo "$v"
printf '%skubernetesVersion: %s\n' "$1" "$v" > "$d/config.yaml"
"$d/kubeadm" config images list --config "$d/config.yaml"`})

	// ContainerdReadyScript waits up to $1 seconds for the containerd
	// listening on the socket $2 to answer (a node image's helper
	// container, see package nodeimage, runs only containerd); it fails,
	// naming the socket, when the time is up.
	ContainerdReadyScript = register(Script{Name: "kind-upgrade-containerd-ready", Body: `end=$(( $(date +%s) + $1 ))
until [ -S "$2" ] && ctr --address "$2" version >/dev/null 2>&1; do
  if [ "$(date +%s)" -ge "$end" ]; then echo "containerd did not answer on $2 within $1s" >&2; exit 1; fi
  sleep 0.1
done`})

	// NodeImageScript describes a node image from its helper container
	// (see package nodeimage) into files of the folder $1, which the
	// provider's copy command then reads (a `docker exec`'s output can
	// lose its end, a copy does not): "describe", the content of the
	// version file $2 (/kind/version, which kind's builder writes without
	// a newline) on a line, then, per further argument, a line "<size>
	// <octal mode> <base64 of its first 64 bytes>" (the ELF header);
	// "images", `ctr images list` of the k8s.io namespace; "config",
	// `containerd config dump`. It fails, naming the file, when one is
	// missing.
	NodeImageScript = register(Script{Name: "kind-upgrade-node-image", Body: `set -e
out=$1
version=$(cat "$2")
shift 2
mkdir -p "$out"
echo "$version" > "$out/describe"
for f; do
  size=$(stat -L -c %s "$f")
  mode=$(stat -L -c %a "$f")
  header=$(head -c 64 "$f" | base64 | tr -d '\n')
  echo "$size $mode $header" >> "$out/describe"
done
ctr --namespace=k8s.io images list > "$out/images"
containerd config dump > "$out/config"`})

	// KubectlAllScript runs kubectl with the admin kubeconfig once per
	// argument, the argument's lines being kubectl's arguments, in order,
	// and stops after the first run that fails. After each run's stdout
	// it prints a newline and the line "kind-upgrade-kubectl-exit <status>";
	// after a failed run's, its stderr too (a run that succeeds has its
	// stderr, kubectl's warnings, dropped, as exec.Output drops it). See
	// KubectlAll and ParseKubectlAll.
	KubectlAllScript = register(Script{Name: "kind-upgrade-kubectl-all", Body: `set -f
IFS='
'
exec 3>&1
for request; do
  err=$(kubectl --kubeconfig=` + AdminKubeconfig + ` $request 2>&1 >&3)
  status=$?
  printf '\n` + KubectlExitMark + ` %d\n' "$status"
  if [ "$status" -ne 0 ]; then
    printf '%s\n' "$err"
    exit 0
  fi
done`})

	// DFScript runs `df -Pk` for its arguments, each replaced by its
	// nearest existing ancestor: the file system a path not made yet will
	// be on.
	DFScript = register(Script{Name: "kind-upgrade-df", Body: `for p; do while [ ! -e "$p" ]; do p=$(dirname "$p"); done; set -- "$@" "$p"; shift; done; df -Pk "$@"`})

	// InotifyScript prints the inotify limits a node's processes are
	// subject to and one line per inotify instance its processes hold:
	//
	//	limits <fs.inotify.max_user_instances> <fs.inotify.max_user_watches> <user.max_inotify_instances> <user.max_inotify_watches>
	//	fd <effective uid> <watches> <command>
	//
	// The fs.inotify values are the initial user namespace's (the
	// host's); the user.* ones are those of the node's own user namespace
	// ("-" where the kernel has none). A process that exits while it is
	// read is left out.
	InotifyScript = register(Script{Name: "kind-upgrade-inotify", Body: `read_or_dash() { cat "$1" 2>/dev/null || echo -; }
echo limits "$(read_or_dash /proc/sys/fs/inotify/max_user_instances)" "$(read_or_dash /proc/sys/fs/inotify/max_user_watches)" "$(read_or_dash /proc/sys/user/max_inotify_instances)" "$(read_or_dash /proc/sys/user/max_inotify_watches)"
find /proc/[0-9]*/fd -lname 'anon_inode:inotify' 2>/dev/null | while read -r f; do
  pid=${f#/proc/}; pid=${pid%%/*}
  uid=$(stat -c %u "/proc/${pid}" 2>/dev/null) || continue
  comm=$(cat "/proc/${pid}/comm" 2>/dev/null) || continue
  watches=$(grep -c '^inotify' "/proc/${pid}/fdinfo/${f##*/}" 2>/dev/null) || watches=0
  echo fd "${uid}" "${watches:-0}" "${comm}"
done`})
)
