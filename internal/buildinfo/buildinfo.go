// Package buildinfo names the running binary from the build information
// the Go toolchain records: one home for the version stored in runs, sent
// by the server and printed in reports.
package buildinfo

import (
	_ "embed"
	"runtime/debug"
	"strings"
)

// release is the text of VERSION: the one home of the release number,
// which the Python package's build backend
// (python/build_backend/persuarena_build.py) reads too.
//
//go:embed VERSION
var release string

// Release returns the release this source tree is (e.g. "0.1.0", from
// internal/buildinfo/VERSION): the Python package's version, and the
// prefix of Version for a build from a checkout.
func Release() string { return strings.TrimSpace(release) }

// stamp, when set at link time (-ldflags "-X
// github.com/persuarena/persuarena/internal/buildinfo.stamp=0.1.0"), is the
// version of a release build: scripts/build-wheels stamps the binary it
// bundles with VERSION, so that the server in a wheel reports the wheel's
// version, and integrations/openenv/server/Dockerfile stamps the tag it
// builds.
var stamp string

// Version names the running binary for stored runs, the server's
// metadata and a report's Generator line: the link-time stamp when set,
// else VersionOf(debug.ReadBuildInfo()).
func Version() string {
	if stamp != "" {
		return stamp
	}
	return VersionOf(debug.ReadBuildInfo())
}

// VersionOf returns the module version recorded in bi (e.g. "v1.2.0") when
// there is one; otherwise, for a build from a checkout ("(devel)"),
// Release, "-devel-" and the VCS revision shortened to 12 characters, with
// "-modified" appended when the work tree had uncommitted changes (e.g.
// "0.1.0-devel-20f0f33a1b2c-modified"); Release+"-devel" when the build
// recorded no revision, and "unknown" without build information (ok false).
func VersionOf(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, modified := vcs(bi)
	if rev == "" {
		return Release() + "-devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := Release() + "-devel-" + rev
	if modified {
		v += "-modified"
	}
	return v
}

// Commit returns the VCS revision the running binary was built from and
// whether the work tree had uncommitted changes; "" when the build
// recorded none (go install of a module version, go run without VCS
// information).
func Commit() (rev string, modified bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	return vcs(bi)
}

// vcs reads the revision and the modified flag bi recorded.
func vcs(bi *debug.BuildInfo) (rev string, modified bool) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, modified
}
