// Package deps pins the module's dependencies that packages under
// construction will use, so `go mod tidy` keeps them. Remove an import once
// a real package uses it.
package deps

import (
	_ "github.com/coder/websocket"
	_ "github.com/goccy/go-yaml"
	_ "github.com/gomlx/gomlx/backends/simplego"
	_ "github.com/gomlx/gomlx/pkg/core/graph"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/parquet-go/parquet-go"
	_ "gonum.org/v1/plot"
)
