// Package liberationmonobolditalic stands in for the face of the same name in
// codeberg.org/go-fonts/liberation: PersuArena never draws with it, so it
// gives the TTF of liberationsansbold (see ../README.md).
package liberationmonobolditalic

import "codeberg.org/go-fonts/liberation/liberationsansbold"

// TTF is the data of liberationsansbold.
var TTF = liberationsansbold.TTF
