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

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// ServeHTTP serves the read-only distribution API: the repositories it
// looks in are those of the host of the request.
func (r *registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "UNSUPPORTED", req.Method+" is not supported: this registry is read-only")
		return
	}
	if req.URL.Path == "/v2/" || req.URL.Path == "/v2" {
		w.Header().Set("Content-Type", "application/json")
		serveBytes(w, req, []byte("{}"))
		return
	}
	name, kind, ref, ok := parsePath(req.URL.Path)
	if !ok {
		http.NotFound(w, req)
		return
	}
	repo := r.repos[registryHost(req.Host)+"/"+name]
	if repo == nil {
		writeError(w, http.StatusNotFound, "NAME_UNKNOWN", "repository name not known to registry")
		return
	}
	if kind == "manifests" {
		r.serveManifest(w, req, repo, ref)
	} else {
		r.serveBlob(w, req, repo, ref)
	}
}

// serveManifest serves the manifest ref, a tag or a digest, of repo.
func (r *registry) serveManifest(w http.ResponseWriter, req *http.Request, repo *repository, ref string) {
	digest, ok := repo.tags[ref]
	if !ok {
		digest = ref
	}
	body, ok := repo.manifests[digest]
	if !ok {
		writeError(w, http.StatusNotFound, "MANIFEST_UNKNOWN", "manifest unknown")
		return
	}
	w.Header().Set("Content-Type", manifestMediaType)
	w.Header().Set("Docker-Content-Digest", digest)
	serveBytes(w, req, body)
}

// serveBlob streams the blob digest of repo from its archive.
func (r *registry) serveBlob(w http.ResponseWriter, req *http.Request, repo *repository, digest string) {
	b, ok := r.blobs[digest]
	if !ok || !repo.blobs[digest] {
		writeError(w, http.StatusNotFound, "BLOB_UNKNOWN", "blob unknown to registry")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Docker-Content-Digest", digest)
	// ServeContent sets Content-Length and answers HEAD and Range requests
	http.ServeContent(w, req, "", time.Time{}, io.NewSectionReader(b.file, b.offset, b.size))
}

func serveBytes(w http.ResponseWriter, req *http.Request, data []byte) {
	http.ServeContent(w, req, "", time.Time{}, bytes.NewReader(data))
}

// parsePath splits "/v2/<name>/manifests/<reference>" and
// "/v2/<name>/blobs/<digest>"; name may have slashes.
func parsePath(p string) (name, kind, ref string, ok bool) {
	rest, found := strings.CutPrefix(p, "/v2/")
	parts := strings.Split(rest, "/")
	n := len(parts)
	if !found || n < 3 {
		return "", "", "", false
	}
	name, kind, ref = strings.Join(parts[:n-2], "/"), parts[n-2], parts[n-1]
	ok = name != "" && ref != "" && (kind == "manifests" || kind == "blobs")
	return name, kind, ref, ok
}

// writeError answers with the error body of the distribution spec.
func writeError(w http.ResponseWriter, status int, code, message string) {
	type specError struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(map[string][]specError{"errors": {{Code: code, Message: message}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body) // if the client is gone, there is no one to tell
}
