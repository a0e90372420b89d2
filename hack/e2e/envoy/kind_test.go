// Copyright 2026 The kind-upgrade Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package main

// The tests in this file read kind's own source (the sigs.k8s.io/kind
// module the repository depends on) and fail when a kind bump changes what
// the stand-in was written for. Nothing of kind is called or copied: its
// Go files are parsed as text, its templates executed with data of ours.

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"sigs.k8s.io/yaml"
)

// What kind v0.33.0's start command and files are; kindImage (main.go) is
// its image. When a kind bump changes one of them, re-check the stand-in
// against kind's new load balancer code, then update them.
const (
	kindBootstrapPath = "/home/envoy/envoy.yaml"
	kindLDSPath       = "/home/envoy/lds.yaml"
	kindCDSPath       = "/home/envoy/cds.yaml"
	kindCommand       = "envoy -c " + kindBootstrapPath
)

var kindModuleDir = sync.OnceValues(func() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kind")
	cmd.Dir = filepath.Join("..", "..") // the repository's root module
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
})

// kindFile is the Go source of one file of the kind module, and the file
// parsed.
func kindFile(t *testing.T, rel string) (string, *ast.File) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to find the kind module with")
	}
	dir, err := kindModuleDir()
	if err != nil || dir == "" {
		t.Fatalf("go list -m sigs.k8s.io/kind from the repository root: %q, %v", dir, err)
	}
	src, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(src), f
}

// stringConsts are a file's top-level string constants.
func stringConsts(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, name := range v.Names {
				if i < len(v.Values) {
					if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	return out
}

func funcDecl(t *testing.T, f *ast.File, name string) *ast.FuncDecl {
	t.Helper()
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == name {
			return fd
		}
	}
	t.Fatalf("kind has no func %s any more: re-check the stand-in", name)
	return nil
}

// bootstrapCommand evaluates GenerateBootstrapCommand's body, which is
// string constants, string variables and fmt.Sprintf of those, for the
// given parameters. An unexpected shape fails the test.
func bootstrapCommand(t *testing.T, f *ast.File, params map[string]string) []string {
	t.Helper()
	fd := funcDecl(t, f, "GenerateBootstrapCommand")
	env := stringConsts(f)
	for k, v := range params {
		env[k] = v
	}
	var eval func(e ast.Expr) string
	eval = func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(e.Value); err == nil {
				return s
			}
		case *ast.Ident:
			if s, ok := env[e.Name]; ok {
				return s
			}
		case *ast.CallExpr:
			if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(e.Args) > 0 {
				args := make([]any, 0, len(e.Args)-1)
				for _, a := range e.Args[1:] {
					args = append(args, eval(a))
				}
				return sprintf(eval(e.Args[0]), args...)
			}
		}
		t.Fatalf("GenerateBootstrapCommand: cannot evaluate %T at %v: kind changed it, re-check the stand-in", e, e.Pos())
		return ""
	}
	for _, s := range fd.Body.List {
		switch s := s.(type) {
		case *ast.AssignStmt:
			for i, lhs := range s.Lhs {
				env[lhs.(*ast.Ident).Name] = eval(s.Rhs[i])
			}
		case *ast.ReturnStmt:
			lit, ok := s.Results[0].(*ast.CompositeLit)
			if !ok {
				t.Fatalf("GenerateBootstrapCommand returns %T, want a []string literal", s.Results[0])
			}
			var out []string
			for _, e := range lit.Elts {
				out = append(out, eval(e))
			}
			return out
		}
	}
	t.Fatal("GenerateBootstrapCommand has no return")
	return nil
}

// sprintf is fmt.Sprintf for %s verbs only, so that the test does not pass
// a non-constant format to fmt (vet would rightly object).
func sprintf(format string, args ...any) string {
	parts := strings.Split(format, "%s")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(p)
		if i < len(parts)-1 && i < len(args) {
			b.WriteString(args[i].(string))
		}
	}
	return b.String()
}

// TestKindImageAndCommand pins what kind runs: the image name, `bash -c`
// as the container command (no entrypoint override: our image has none),
// the bootstrap and discovery files the script writes, the `envoy -c`
// invocation in a loop that ends only when envoy exits 0, and the
// write-then-rename updates the stand-in follows.
func TestKindImageAndCommand(t *testing.T) {
	t.Parallel()
	_, constFile := kindFile(t, "pkg/cluster/internal/loadbalancer/const.go")
	if got := stringConsts(constFile)["Image"]; got != kindImage {
		t.Errorf("kind's load balancer image is %q, the stand-in was written for %q: re-check it, then update kindImage", got, kindImage)
	}

	_, f := kindFile(t, "pkg/cluster/internal/loadbalancer/config.go")
	consts := stringConsts(f)
	for name, want := range map[string]string{
		"ProxyConfigPath": kindBootstrapPath, "ProxyConfigPathLDS": kindLDSPath, "ProxyConfigPathCDS": kindCDSPath,
	} {
		if consts[name] != want {
			t.Errorf("kind's %s = %q, the stand-in was written for %q", name, consts[name], want)
		}
	}
	cmd := bootstrapCommand(t, f, map[string]string{"clusterName": "kind", "containerName": "kind-external-load-balancer"})
	if len(cmd) != 3 || cmd[0] != "bash" || cmd[1] != "-c" {
		t.Fatalf("kind's bootstrap command = %q, want bash -c SCRIPT", cmd)
	}
	script := cmd[2]
	if !strings.Contains(script, kindCommand+" && break") {
		t.Errorf("kind's script does not run %q in its restart loop:\n%s", kindCommand, script)
	}
	written := map[string]string{}
	for _, m := range regexp.MustCompile(`echo -en '([^']*)' > (\S+)`).FindAllStringSubmatch(script, -1) {
		written[m[2]] = m[1]
	}
	checkKeys(t, written[kindBootstrapPath], reflect.TypeFor[bootstrapFile]())
	b, err := parseBootstrap([]byte(written[kindBootstrapPath]))
	if err != nil {
		t.Fatalf("the bootstrap kind's script writes does not parse: %v\n%s", err, script)
	}
	want := bootstrap{NodeCluster: "kind", NodeID: "kind-external-load-balancer", LDSPath: kindLDSPath, CDSPath: kindCDSPath}
	if b != want {
		t.Errorf("kind's bootstrap = %+v, want %+v", b, want)
	}
	for _, path := range []string{kindLDSPath, kindCDSPath} {
		content, ok := written[path]
		if !ok {
			t.Errorf("kind's script does not create %s", path)
		}
		if ls, err := parseListeners([]byte(content)); err != nil || len(ls) != 0 {
			t.Errorf("the initial %s %q: %v, %v; want no resources", path, content, ls, err)
		}
	}

	src, pf := kindFile(t, "pkg/cluster/internal/providers/docker/provision.go")
	fd := funcDecl(t, pf, "runArgsForLoadBalancer")
	body := src[fd.Pos()-pf.FileStart : fd.End()-pf.FileStart]
	if strings.Contains(body, "--entrypoint") || !strings.Contains(body, "loadbalancer.GenerateBootstrapCommand(") {
		t.Errorf("kind's docker provider no longer runs the image with only a command:\n%s", body)
	}
	action, _ := kindFile(t, "pkg/cluster/internal/create/actions/loadbalancer/loadbalancer.go")
	for _, s := range []string{`ProxyConfigPathLDS + ".tmp"`, `ProxyConfigPathCDS + ".tmp"`, "mv %s %s"} {
		if !strings.Contains(action, s) {
			t.Errorf("kind's load balancer action has no %s: does it still replace the files by rename?", s)
		}
	}
}

// kindTemplates renders kind's LDS and CDS templates with data of ours
// shaped as kind's ConfigData.
func kindTemplates(t *testing.T, ipv6 bool) (lds, cds string) {
	t.Helper()
	_, f := kindFile(t, "pkg/cluster/internal/loadbalancer/config.go")
	consts := stringConsts(f)
	data := struct {
		ControlPlanePort int
		BackendServers   map[string]string
		IPv6             bool
	}{6443, map[string]string{
		"kind-control-plane":  "kind-control-plane:6443",
		"kind-control-plane2": "kind-control-plane2:6443",
	}, ipv6}
	funcs := template.FuncMap{"hostPort": func(addr string) (map[string]string, error) {
		h, p, err := net.SplitHostPort(addr)
		return map[string]string{"host": h, "port": p}, err
	}}
	render := func(name string) string {
		text, ok := consts[name]
		if !ok {
			t.Fatalf("kind has no %s any more: re-check the stand-in", name)
		}
		var b bytes.Buffer
		if err := template.Must(template.New(name).Funcs(funcs).Parse(text)).Execute(&b, data); err != nil {
			t.Fatalf("%s: %v (did kind's ConfigData change?)", name, err)
		}
		return b.String()
	}
	return render("ProxyLDSConfigTemplate"), render("ProxyCDSConfigTemplate")
}

// TestKindTemplates parses kind's LDS and CDS as kind renders them, checks
// every key they use is one the parser knows, and checks what the stand-in
// makes of them.
func TestKindTemplates(t *testing.T) {
	t.Parallel()
	for _, ipv6 := range []bool{false, true} {
		t.Run("ipv6="+strconv.FormatBool(ipv6), func(t *testing.T) {
			t.Parallel()
			lds, cds := kindTemplates(t, ipv6)
			checkKeys(t, lds, reflect.TypeFor[discoveryFile[listenerResource]]())
			checkKeys(t, cds, reflect.TypeFor[discoveryFile[clusterResource]]())

			listeners, err := parseListeners([]byte(lds))
			if err != nil {
				t.Fatalf("kind's LDS: %v\n%s", err, lds)
			}
			wantAddr := "0.0.0.0:6443"
			family := "V4_PREFERRED"
			if ipv6 {
				wantAddr, family = "[::]:6443", "AUTO"
			}
			wantL := []listenerConfig{{Name: "listener_apiserver", Address: wantAddr, Cluster: "kube_apiservers"}}
			if !reflect.DeepEqual(listeners, wantL) {
				t.Errorf("kind's LDS = %+v, want %+v", listeners, wantL)
			}

			clusters, err := parseClusters([]byte(cds))
			if err != nil {
				t.Fatalf("kind's CDS: %v\n%s", err, cds)
			}
			if len(clusters) == 1 {
				slices.Sort(clusters[0].Endpoints) // kind ranges over a map
			}
			wantC := []clusterConfig{{
				Name:           "kube_apiservers",
				ConnectTimeout: 250 * time.Millisecond,
				Discovery:      "STRICT_DNS",
				LookupFamily:   family,
				Endpoints:      []string{"kind-control-plane2:6443", "kind-control-plane:6443"},
				PanicThreshold: 50,
				Health: &healthConfig{
					Timeout:            3 * time.Second,
					Interval:           2 * time.Second,
					NoTrafficInterval:  3 * time.Second,
					UnhealthyThreshold: 2,
					HealthyThreshold:   1,
					Host:               "kube_apiservers",
					Path:               "/healthz",
					TLS:                true,
				},
			}}
			if !reflect.DeepEqual(clusters, wantC) {
				t.Errorf("kind's CDS = %+v %+v, want %+v %+v", clusters, clusters[0].Health, wantC, wantC[0].Health)
			}
		})
	}
}

// checkKeys fails for every key path of doc (YAML) that typ does not
// declare. Paths look like resources[].health_checks[].timeout; a map
// field declares any key below it.
func checkKeys(t *testing.T, doc string, typ reflect.Type) {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	declaredPaths(typ, "", known)
	used := map[string]bool{}
	usedPaths(v, "", used)
	if len(used) < 10 {
		t.Fatalf("only %d key paths in\n%s", len(used), doc)
	}
	for p := range used {
		if !isKnown(p, known) {
			t.Errorf("kind's config uses %s, which the stand-in does not know: re-check it", p)
		}
	}
}

func isKnown(path string, known map[string]bool) bool {
	if known[path] {
		return true
	}
	for i := strings.LastIndex(path, "."); i > 0; i = strings.LastIndex(path[:i], ".") {
		if known[path[:i]+".*"] {
			return true
		}
	}
	return false
}

func declaredPaths(t reflect.Type, prefix string, out map[string]bool) {
	if t == reflect.TypeFor[duration]() {
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		declaredPaths(t.Elem(), prefix, out)
	case reflect.Slice:
		declaredPaths(t.Elem(), prefix+"[]", out)
	case reflect.Map:
		out[prefix+".*"] = true
	case reflect.Struct:
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			p := strings.TrimPrefix(prefix+"."+name, ".")
			out[p] = true
			declaredPaths(t.Field(i).Type, p, out)
		}
	}
}

func usedPaths(v any, prefix string, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			p := strings.TrimPrefix(prefix+"."+k, ".")
			out[p] = true
			usedPaths(sub, p, out)
		}
	case []any:
		for _, sub := range v {
			usedPaths(sub, prefix+"[]", out)
		}
	}
}

// TestCheckKeys makes sure the key check above catches a key the parser
// does not declare, including below a list and next to a map.
func TestCheckKeys(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	declaredPaths(reflect.TypeFor[discoveryFile[clusterResource]](), "", known)
	for path, want := range map[string]bool{
		"resources[].health_checks[].interval":                                                              true,
		"resources[].health_checks[].transport_socket_match_criteria.anything":                              true,
		"resources[].health_checks[].tcp_health_check":                                                      false,
		"resources[].outlier_detection":                                                                     false,
		"resources[].load_assignment.endpoints[].lb_endpoints[].endpoint.address.socket_address.port_value": true,
		"resources[].load_assignment.endpoints[].priority":                                                  false,
	} {
		if got := isKnown(path, known); got != want {
			t.Errorf("isKnown(%s) = %v, want %v", path, got, want)
		}
	}
}
