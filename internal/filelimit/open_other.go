//go:build !unix

package filelimit

// openNonblock is not needed off Unix (Check refuses named pipes first).
const openNonblock = 0
