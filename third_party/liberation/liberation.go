// Package liberation holds TTF data of the Liberation fonts (three real
// faces in this trimmed copy; see README.md).
package liberation
