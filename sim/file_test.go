package sim

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// namesHave checks that the list called what holds every name of want and
// none of no.
func namesHave(t *testing.T, what string, names, want, no []string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("%s lacks %s", what, w)
		}
	}
	for _, n := range no {
		if slices.Contains(names, n) {
			t.Errorf("%s has %s", what, n)
		}
	}
}

func TestParamNames(t *testing.T) {
	// integer, array and set fields are not float64 parameters
	namesHave(t, "ParamNames", ParamNames(),
		[]string{"Accept", "NoiseSD", "TraitAgree", "AR.GainAutonomy", "AA.BadMove", "EB.MoveBad", "Strategy.DonationInfo", "Strategy.MoveAskAmount"},
		[]string{"Name", "Rapport0", "FatigueFree", "AR.Plans", "AR.AddressActs", "AR.Surface"})
	namesHave(t, "IntParamNames", IntParamNames(),
		[]string{"FatigueFree", "MaxVoice", "Blocking", "AA.Plans", "AA.Conflict", "AA.MaxConflict", "AA.PlanSpread", "EB.PlanSpread"},
		[]string{"Accept", "AR.GainAutonomy", "Rapport0", "AR.AddressActs", "AR.Surface", "Name"})
	c := DefaultConfig()
	if v, err := c.Param("AA.PlanSpread"); err != nil || v != 1 {
		t.Errorf("Param(AA.PlanSpread) = %v, %v; want 1", v, err)
	}
	if err := c.SetParam("AA.PlanSpread", 0); err != nil || c.AA.PlanSpread != 0 {
		t.Errorf("SetParam(AA.PlanSpread, 0): %v, value %d", err, c.AA.PlanSpread)
	}
	for _, v := range []float64{0.5, math.NaN(), math.Inf(1), 1e12, 1 << 31, -(1 << 31) - 1} {
		if err := c.SetParam("AA.Plans", v); err == nil || !strings.Contains(err.Error(), "wants a whole number") || c.AA.Plans != 2 {
			t.Errorf("SetParam(AA.Plans, %v): %v, value %d; want an error asking for a whole number and Plans left at 2", v, err, c.AA.Plans)
		}
	}
	for _, v := range []float64{1<<31 - 1, -(1 << 31), 3} {
		if err := c.SetParam("FatigueFree", v); err != nil || float64(c.FatigueFree) != v {
			t.Errorf("SetParam(FatigueFree, %v): %v, value %d", v, err, c.FatigueFree)
		}
	}
	if v, err := c.Param("AR.GainAutonomy"); err != nil || v != 0.06 {
		t.Errorf("Param(AR.GainAutonomy) = %v, %v", v, err)
	}
	if err := c.SetParam("AR.GainAutonomy", 0.09); err != nil || c.AR.GainAutonomy != 0.09 {
		t.Errorf("SetParam: %v, value %v", err, c.AR.GainAutonomy)
	}
	if err := c.SetParam("Strategy.DonationInfo", 0.05); err != nil || c.Strategy.DonationInfo != 0.05 {
		t.Errorf("SetParam(Strategy.DonationInfo): %v, value %v", err, c.Strategy.DonationInfo)
	}
	for _, bad := range []string{"Acept", "XX.BadMove", "AR.AddressActs", "AR.Surface", "Name", "AR", "Accept.X", "Strategy.Nope", "Rapport0.X"} {
		if _, err := c.Param(bad); err == nil {
			t.Errorf("Param(%q): no error", bad)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{
  "schema": "persuarena.sim-config/v1",
  "base": "sim-hard",
  "params": {
    "Accept": 0.5,
    "AR.BadMove": 0.01
  }
}
`)
	c, err := ByName("sim:" + good)
	if err != nil {
		t.Fatal(err)
	}
	want := Hard()
	want.Accept, want.AR.BadMove, want.Name = 0.5, 0.01, "sim:"+good
	if c.Accept != 0.5 || c.AR.BadMove != 0.01 || c.Name != "sim:"+good || c.NoiseSD != want.NoiseSD || Fingerprint(c) != Fingerprint(want) {
		t.Errorf("loaded %+v", c)
	}
	// an int parameter from a file: one plan need for every avoider
	flat := write("flat.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\"AA.PlanSpread\": 0}\n}\n")
	if c, err := ByName("sim:" + flat); err != nil || c.AA.PlanSpread != 0 || c.AA.Plans != 2 {
		t.Errorf("flat.json: AA.PlanSpread %d, Plans %d, err %v; want 0, 2, nil", c.AA.PlanSpread, c.AA.Plans, err)
	}
	cases := []struct{ name, body, want string }{
		{"unknown.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\n    \"Accept\": 0.3,\n    \"Acept\": 0.2\n  }\n}\n",
			"unknown.json:5: params.Acept: sim: unknown parameter"},
		{"type.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\"Accept\": \"high\"}\n}\n", "type.json:3: params.Accept: want a float64"},
		{"schema.json", "{\n  \"schema\": \"v0\"\n}\n", `schema.json:2: schema: "v0", want`},
		{"range.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\n    \"NoiseSD\": -1\n  }\n}\n", "range.json:4: params.NoiseSD: sim config: NoiseSD = -1 outside"},
		{"field.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n\n  \"parms\": {}\n}\n", "field.json:4: parms: unknown field"},
		{"base.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"base\": \"sim-medium\"\n}\n", "base.json:3: base: unknown simulated persuadee"},
		{"syntax.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\"Accept\": 0.3,}\n}\n", "syntax.json:3: invalid character"},
		{"int.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\n    \"AA.PlanSpread\": 0.5\n  }\n}\n", "int.json:4: params.AA.PlanSpread: sim: parameter \"AA.PlanSpread\" wants a whole number in [-2147483648, 2147483647], got 0.5"},
		{"fatigue.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\n    \"Accept\": 0.3,\n    \"FatigueFree\": -1\n  }\n}\n", "fatigue.json:5: params.FatigueFree: sim config: FatigueFree = -1, want >= 0"},
		{"plans.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\n    \"AA.Conflict\": -2\n  }\n}\n", "plans.json:4: params.AA.Conflict: sim config: AA.Conflict = -2, want >= 0"},
		{"spread.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\n    \"AA.PlanSpread\": 2\n  }\n}\n", "spread.json:4: params.AA.PlanSpread: sim config: AA.PlanSpread = 2, want in [0, Plans - 1]"},
	}
	for _, tc := range cases {
		p := write(tc.name, tc.body)
		_, err := ByName("sim:" + p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := ByName("sim:" + filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}

// Fingerprint is the fingerprint of a persuadee with c, its name aside.
func Fingerprint(c Config) string {
	c.Name = ""
	return New(c).Fingerprint()
}
