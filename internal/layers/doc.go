// Package layers holds the test that keeps the package layers of
// docs/architecture.md: every import of every non-test Go file in the
// module goes to a package of the importer's layer or a lower one, and
// every package has a layer. It has no code of its own.
package layers
