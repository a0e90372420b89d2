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

package elfarch

import (
	"bytes"
	"debug/elf"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/artifactstest"
)

func TestRead(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		header []byte
		want   string
	}{
		{"amd64", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_X86_64, ""), "amd64"},
		{"arm64", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_AARCH64, ""), "arm64"},
		{"arm", artifactstest.ELF(elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_ARM, ""), "arm"},
		{"ppc64le", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_PPC64, ""), "ppc64le"},
		{"ppc64", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_PPC64, ""), "ppc64"},
		{"s390x", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_S390, ""), "s390x"},
		{"386", artifactstest.ELF(elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_386, ""), "386"},
		{"riscv64", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_RISCV, ""), "riscv64"},
		{"loong64", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_LOONGARCH, ""), "loong64"},
		{"mips64le", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_MIPS, ""), "mips64le"},
		{"a machine Go does not know", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_SPARCV9, ""), "EM_SPARCV9"},
		{"a shell script", []byte("#!/bin/sh\nexec /usr/bin/kubeadm \"$@\"\n"), ""},
		{"too short", []byte("\x7fELF\x02\x01"), ""},
		{"empty", nil, ""},
		{"bad byte order", artifactstest.ELF(elf.ELFCLASS64, elf.ELFDATANONE, elf.EM_X86_64, ""), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Read(bytes.NewReader(tc.header))
			if err != nil || got != tc.want {
				t.Errorf("Read = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
