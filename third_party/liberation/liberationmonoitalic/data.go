// Package liberationmonoitalic stands in for the face of the same name in
// codeberg.org/go-fonts/liberation: PersuArena never draws with it, so it
// gives the TTF of liberationsansregular (see ../README.md).
package liberationmonoitalic

import "codeberg.org/go-fonts/liberation/liberationsansregular"

// TTF is the data of liberationsansregular.
var TTF = liberationsansregular.TTF
