package sim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParamNames(t *testing.T) {
	names := ParamNames()
	for _, want := range []string{"Accept", "NoiseSD", "TraitAgree", "AR.GainAutonomy", "AA.BadMove", "EB.MoveBad", "Strategy.DonationInfo", "Strategy.MoveAskAmount"} {
		if !slices.Contains(names, want) {
			t.Errorf("ParamNames lacks %s", want)
		}
	}
	// Integer, array and set fields are not parameters.
	for _, no := range []string{"Name", "Rapport0", "FatigueFree", "AR.Plans", "AR.AddressActs", "AR.Surface"} {
		if slices.Contains(names, no) {
			t.Errorf("ParamNames has %s", no)
		}
	}
	c := DefaultConfig()
	if v, err := c.Param("AR.GainAutonomy"); err != nil || v != 0.06 {
		t.Errorf("Param(AR.GainAutonomy) = %v, %v", v, err)
	}
	if err := c.SetParam("AR.GainAutonomy", 0.09); err != nil || c.AR.GainAutonomy != 0.09 {
		t.Errorf("SetParam: %v, value %v", err, c.AR.GainAutonomy)
	}
	if err := c.SetParam("Strategy.DonationInfo", 0.05); err != nil || c.Strategy.DonationInfo != 0.05 {
		t.Errorf("SetParam(Strategy.DonationInfo): %v, value %v", err, c.Strategy.DonationInfo)
	}
	for _, bad := range []string{"Acept", "XX.BadMove", "AR.Plans", "Name", "AR", "Accept.X", "Strategy.Nope", "Rapport0.X"} {
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
	cases := []struct{ name, body, want string }{
		{"unknown.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\n    \"Accept\": 0.3,\n    \"Acept\": 0.2\n  }\n}\n",
			"unknown.json:5: params.Acept: sim: unknown parameter"},
		{"type.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\"Accept\": \"high\"}\n}\n", "type.json:3: params.Accept: want a float64"},
		{"schema.json", "{\n  \"schema\": \"v0\"\n}\n", `schema.json:2: schema: "v0", want`},
		{"range.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\n    \"NoiseSD\": -1\n  }\n}\n", "range.json:4: params.NoiseSD: sim config: NoiseSD = -1 outside"},
		{"field.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n\n  \"parms\": {}\n}\n", "field.json:4: parms: unknown field"},
		{"base.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"base\": \"sim-medium\"\n}\n", "base.json:3: base: unknown simulated persuadee"},
		{"syntax.json", "{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\"Accept\": 0.3,}\n}\n", "syntax.json:3: invalid character"},
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
