package report

import (
	"testing"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
)

// The binary keeps three real Liberation faces (third_party/liberation):
// the figures' Sans regular and bold and plot's default Serif regular must
// be those fonts, not stand-ins.
func TestFiguresUseKeptFaces(t *testing.T) {
	for _, tc := range []struct {
		f    font.Font
		want string
	}{
		{sans, "Liberation Sans"},
		{sansBold, "Liberation Sans Bold"},
		{plot.DefaultFont, "Liberation Serif"},
	} {
		face := font.DefaultCache.Lookup(tc.f, 10)
		if face.Face == nil {
			t.Fatalf("%+v: no face", tc.f)
		}
		name, err := face.Face.Name(nil, sfnt.NameIDFull)
		if err != nil || name != tc.want {
			t.Errorf("%+v: face %q (%v), want %q", tc.f, name, err, tc.want)
		}
	}
}
