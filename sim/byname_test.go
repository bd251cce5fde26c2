package sim

import (
	"reflect"
	"strings"
	"testing"
)

func TestByName(t *testing.T) {
	for name, want := range map[string]Config{"sim": DefaultConfig(), "sim-soft": Soft(), "sim-hard": Hard()} {
		got, err := ByName(name)
		if err != nil || !reflect.DeepEqual(got, want) || got.Name != name {
			t.Errorf("ByName(%q) = %+v, %v; want the %s config named %q", name, got.Name, err, name, name)
		}
		if New(got).Name() != name {
			t.Errorf("persuadee from ByName(%q) is named %q", name, New(got).Name())
		}
	}
	for _, bad := range []string{"", "soft", "sim-default", "sim-", "simulator"} {
		if _, err := ByName(bad); err == nil || !strings.Contains(err.Error(), "sim, sim-soft, sim-hard") {
			t.Errorf("ByName(%q) error = %v, want one listing the names", bad, err)
		}
	}
}
