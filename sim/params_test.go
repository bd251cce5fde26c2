package sim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

// paramRows flattens a Config into "name -> value" table cells, in field
// order (per-type fields as "EB.BadMove").
func paramRows(c sim.Config) (names, values []string) {
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f, fv := t.Field(i), v.Field(i)
			name := prefix + f.Name
			var val string
			switch x := fv.Interface().(type) {
			case sim.TypeParams, sim.StrategyParams:
				walk(name+".", fv)
				continue
			case tagger.ActSet:
				val = strings.Join(x.Strings(), "+")
			case float64:
				val = strconv.FormatFloat(x, 'g', -1, 64)
			case int:
				val = strconv.Itoa(x)
			case bool:
				val = strconv.FormatBool(x)
			case string:
				val = x
			case [5]float64:
				s := make([]string, len(x))
				for k, e := range x {
					s[k] = strconv.FormatFloat(e, 'g', -1, 64)
				}
				val = strings.Join(s, ", ")
			default:
				panic(fmt.Sprintf("paramRows: unhandled field %s of type %T", name, x))
			}
			names, values = append(names, name), append(values, val)
		}
	}
	walk("", reflect.ValueOf(c))
	return names, values
}

// TestDocsParameterTable checks that docs/simulator/parameters.md lists every
// parameter with its current default, so the documentation cannot drift
// from DefaultConfig. SIM_PARAMS=1 prints the rows.
func TestDocsParameterTable(t *testing.T) {
	names, def := paramRows(sim.DefaultConfig())
	_, soft := paramRows(sim.Soft())
	_, hard := paramRows(sim.Hard())
	if os.Getenv("SIM_PARAMS") != "" {
		for i := range names {
			fmt.Printf("| `%s` | %s | %s | %s |\n", names[i], def[i], soft[i], hard[i])
		}
	}
	raw, err := os.ReadFile(filepath.Join("..", "docs", "simulator", "parameters.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for i := range names {
		row := fmt.Sprintf("| `%s` | %s | %s | %s |", names[i], def[i], soft[i], hard[i])
		if !strings.Contains(doc, row) {
			t.Errorf("docs/simulator/parameters.md lacks the row %s", row)
		}
	}
}
