package sim

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// ParamNames lists the names of every float64 parameter of Config, in
// declaration order: a top-level field by its Go name ("Accept",
// "TraitAgree"), a per-type field as TYPE.Field ("AR.GainAutonomy") and a
// strategy reaction as Strategy.Field ("Strategy.DonationInfo").
// They are the names Param, SetParam, config files (LoadFile) and the fit
// (package simfit) use; a float64 field added to Config or TypeParams is
// named here without further code.
func ParamNames() []string {
	var out []string
	ct := reflect.TypeFor[Config]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		switch {
		case f.Type.Kind() == reflect.Float64:
			out = append(out, f.Name)
		case nestedType(f.Type):
			for j := range f.Type.NumField() {
				if g := f.Type.Field(j); g.Type.Kind() == reflect.Float64 {
					out = append(out, f.Name+"."+g.Name)
				}
			}
		}
	}
	return out
}

// nestedType reports whether t is a parameter group nested in Config
// (TypeParams, StrategyParams).
func nestedType(t reflect.Type) bool {
	return t == reflect.TypeFor[TypeParams]() || t == reflect.TypeFor[StrategyParams]()
}

// field returns the addressable float64 field of c named name (see
// ParamNames), or an error naming the problem.
func (c *Config) field(name string) (reflect.Value, error) {
	v := reflect.ValueOf(c).Elem()
	top, sub, nested := strings.Cut(name, ".")
	f := v.FieldByName(top)
	if nested {
		if !f.IsValid() || !nestedType(f.Type()) {
			return reflect.Value{}, fmt.Errorf("sim: unknown parameter %q (a nested parameter is EB, IT, AR, AA or Strategy, then a dot and a field)", name)
		}
		f = f.FieldByName(sub)
	}
	if !f.IsValid() || f.Kind() != reflect.Float64 || !slices.Contains(ParamNames(), name) {
		return reflect.Value{}, fmt.Errorf("sim: unknown parameter %q (not a float64 field of sim.Config; see sim.ParamNames)", name)
	}
	return f, nil
}

// Param returns the value of the parameter named name (see ParamNames);
// an unknown name is an error.
func (c *Config) Param(name string) (float64, error) {
	f, err := c.field(name)
	if err != nil {
		return 0, err
	}
	return f.Float(), nil
}

// SetParam sets the parameter named name (see ParamNames) to v; an unknown
// name is an error. It does not validate v (Validate does).
func (c *Config) SetParam(name string, v float64) error {
	f, err := c.field(name)
	if err != nil {
		return err
	}
	f.SetFloat(v)
	return nil
}
