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
	"encoding/binary"
	"io"
)

// headerLen is how much of a file Read needs: e_ident, e_type and
// e_machine.
const headerLen = 20

// Read reads the start of the file r and returns the GOARCH it is built
// for, the ELF machine name (EM_...) for a machine Go has no GOARCH for, or
// "" when r is not an ELF file. It reads at most the first 20 bytes.
func Read(r io.Reader) (string, error) {
	header := make([]byte, headerLen)
	n, err := io.ReadFull(r, header)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", err
	}
	return arch(header[:n]), nil
}

// arch returns the GOARCH of the ELF file whose first bytes are header,
// the ELF machine name for a machine Go has no GOARCH for, or "" when header
// is not the start of an ELF file.
func arch(header []byte) string {
	if len(header) < headerLen || !bytes.HasPrefix(header, []byte(elf.ELFMAG)) {
		return ""
	}
	class := elf.Class(header[elf.EI_CLASS])
	data := elf.Data(header[elf.EI_DATA])
	var order binary.ByteOrder
	switch data {
	case elf.ELFDATA2LSB:
		order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		order = binary.BigEndian
	default:
		return ""
	}
	is64 := class == elf.ELFCLASS64
	little := data == elf.ELFDATA2LSB
	machine := elf.Machine(order.Uint16(header[18:20]))
	switch {
	case machine == elf.EM_X86_64 && is64:
		return "amd64"
	case machine == elf.EM_386:
		return "386"
	case machine == elf.EM_AARCH64 && is64:
		return "arm64"
	case machine == elf.EM_ARM:
		return "arm"
	case machine == elf.EM_PPC64 && little:
		return "ppc64le"
	case machine == elf.EM_PPC64:
		return "ppc64"
	case machine == elf.EM_S390 && is64:
		return "s390x"
	case machine == elf.EM_RISCV && is64:
		return "riscv64"
	case machine == elf.EM_LOONGARCH && is64:
		return "loong64"
	case machine == elf.EM_MIPS && is64 && little:
		return "mips64le"
	case machine == elf.EM_MIPS && is64:
		return "mips64"
	case machine == elf.EM_MIPS && little:
		return "mipsle"
	case machine == elf.EM_MIPS:
		return "mips"
	}
	return machine.String()
}
