// Package liberationserifbolditalic stands in for the face of the same name in
// codeberg.org/go-fonts/liberation: PersuArena never draws with it, so it
// gives the TTF of liberationserifregular (see ../README.md).
package liberationserifbolditalic

import "codeberg.org/go-fonts/liberation/liberationserifregular"

// TTF is the data of liberationserifregular.
var TTF = liberationserifregular.TTF
