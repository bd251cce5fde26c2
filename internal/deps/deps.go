// Package deps pins the module's dependencies while packages are written.
package deps

import (
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/vbauerster/mpb/v8"
	_ "gonum.org/v1/gonum/stat"
	_ "modernc.org/sqlite"
)
