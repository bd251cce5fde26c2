package sim

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// ParamNames lists the names of every float64 parameter of Config, in
// declaration order: a top-level field by its Go name ("Accept",
// "TraitAgree"), a per-type field as TYPE.Field ("AR.GainAutonomy") and a
// strategy reaction as Strategy.Field ("Strategy.DonationInfo").
// They are the names Param, SetParam, config files (LoadFile) and the fit
// (package simfit) use; a float64 field added to Config or TypeParams is
// named here without further code. The integer parameters are named by
// IntParamNames.
func ParamNames() []string { return namesOf(reflect.Float64) }

// IntParamNames lists the names of every int parameter of Config
// ("FatigueFree", "AA.Plans", "AA.PlanSpread"), named as ParamNames names
// the float64 ones, in declaration order. Param, SetParam and config files
// take them too, with integral values; the fit does not (its parameters
// are continuous).
func IntParamNames() []string { return namesOf(reflect.Int) }

// namesOf lists the parameter names of the fields of kind k.
func namesOf(k reflect.Kind) []string {
	var out []string
	ct := reflect.TypeFor[Config]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		switch {
		case f.Type.Kind() == k:
			out = append(out, f.Name)
		case nestedType(f.Type):
			for j := range f.Type.NumField() {
				if g := f.Type.Field(j); g.Type.Kind() == k {
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

// field returns the addressable float64 or int field of c named name
// (see ParamNames, IntParamNames), or an error naming the problem.
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
	switch {
	case f.IsValid() && f.Kind() == reflect.Float64 && slices.Contains(ParamNames(), name),
		f.IsValid() && f.Kind() == reflect.Int && slices.Contains(IntParamNames(), name):
		return f, nil
	}
	return reflect.Value{}, fmt.Errorf("sim: unknown parameter %q (not a float64 or int field of sim.Config; see sim.ParamNames, sim.IntParamNames)", name)
}

// Param returns the value of the parameter named name (see ParamNames and
// IntParamNames; an int parameter as a float64); an unknown name is an
// error.
func (c *Config) Param(name string) (float64, error) {
	f, err := c.field(name)
	if err != nil {
		return 0, err
	}
	if f.Kind() == reflect.Int {
		return float64(f.Int()), nil
	}
	return f.Float(), nil
}

// SetParam sets the parameter named name (see ParamNames and
// IntParamNames) to v; an unknown name, or a value that is not a whole
// number in [-2^31, 2^31) for an int parameter, is an error. It does not
// validate v otherwise (Validate does).
func (c *Config) SetParam(name string, v float64) error {
	f, err := c.field(name)
	if err != nil {
		return err
	}
	if f.Kind() == reflect.Int {
		if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
			return fmt.Errorf("sim: parameter %q wants a whole number in [-2147483648, 2147483647], got %s", name, strconv.FormatFloat(v, 'f', -1, 64))
		}
		f.SetInt(int64(v))
		return nil
	}
	f.SetFloat(v)
	return nil
}
