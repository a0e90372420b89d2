#!/bin/sh
# Copyright 2026 The kind-upgrade Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Installed in the e2e kube-proxy image as iptables, iptables-save,
# iptables-restore and their ip6tables twins. On first use it picks the
# backend (legacy or nft) that already holds rules in the host network
# namespace (the kubelet and the node's entrypoint put some there), points
# the alternatives at it, and runs the requested command. Later calls go
# straight to the chosen backend.

set -eu

count() {
  n=0
  for save in "iptables-$1-save" "ip6tables-$1-save"; do
    c=$("${save}" 2>/dev/null | grep -c '^-' || true)
    n=$((n + c))
  done
  echo "${n}"
}

legacy=$(count legacy)
nft=$(count nft)
mode=nft
if [ "${legacy}" -gt "${nft}" ]; then
  mode=legacy
fi
for cmd in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -sf "/usr/sbin/xtables-${mode}-multi" "/usr/sbin/${cmd}.new"
  mv -f "/usr/sbin/${cmd}.new" "/usr/sbin/${cmd}"
done
echo "iptables-auto: using ${mode} (rules: legacy ${legacy}, nft ${nft})" >&2
exec "/usr/sbin/$(basename "$0")" "$@"
