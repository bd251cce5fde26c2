package buildinfo

import (
	"regexp"
	"runtime/debug"
	"slices"
	"testing"
)

// TestVersionOf checks the version string for a release, a checkout with
// and without local changes, and no build information.
func TestVersionOf(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "20f0f33a1b2c3d4e5f60718293a4b5c6d7e8f901"}}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: rev}, true, "v1.2.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, true, Release() + "-devel-20f0f33a1b2c"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(slices.Clone(rev), debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, true, Release() + "-devel-20f0f33a1b2c-modified"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, Release() + "-devel"},
		{nil, false, "unknown"},
	} {
		if got := VersionOf(c.bi, c.ok); got != c.want {
			t.Errorf("VersionOf(%+v) = %q, want %q", c.bi, got, c.want)
		}
	}
}

// TestRelease checks VERSION holds a plain release number, which Go
// versions and Python's PEP 440 both accept as is (the Python build
// backend uses it as the package version).
func TestRelease(t *testing.T) {
	if !regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`).MatchString(Release()) {
		t.Fatalf("VERSION = %q, want MAJOR.MINOR.PATCH", Release())
	}
}

// TestStamp checks that a link-time stamp is the version, and that without
// one (this test binary) Version is VersionOf's.
func TestStamp(t *testing.T) {
	if got, want := Version(), VersionOf(debug.ReadBuildInfo()); got != want {
		t.Fatalf("unstamped Version() = %q, want %q", got, want)
	}
	defer func(old string) { stamp = old }(stamp)
	stamp = "9.8.7"
	if got := Version(); got != "9.8.7" {
		t.Fatalf("stamped Version() = %q, want 9.8.7", got)
	}
}
